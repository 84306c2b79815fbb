package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

func canonicalLines(mems []memsync.Memory) [][]byte {
	out := make([][]byte, len(mems))
	for i := range mems {
		out[i] = mems[i].Canonical()
	}
	return out
}

func TestCorpusIsDeterministic(t *testing.T) {
	a := newGenerator(42, 40, true).take(3000)
	b := newGenerator(42, 40, true).take(3000)
	for i := range a {
		if !bytes.Equal(a[i].Canonical(), b[i].Canonical()) || a[i].Path != b[i].Path || a[i].Line != b[i].Line {
			t.Fatalf("record %d differs between two runs of seed 42:\n%s\n%s", i, a[i].Canonical(), b[i].Canonical())
		}
	}
	c := newGenerator(43, 40, true).take(3000)
	same := 0
	for i := range a {
		if bytes.Equal(a[i].Canonical(), c[i].Canonical()) {
			same++
		}
	}
	if same > 0 {
		t.Errorf("seeds 42 and 43 share %d records", same)
	}
	// A prefix of a longer stream is the shorter stream.
	d := newGenerator(42, 40, true).take(1000)
	for i := range d {
		if !bytes.Equal(a[i].Canonical(), d[i].Canonical()) {
			t.Fatalf("record %d depends on the stream's length", i)
		}
	}
}

func TestCorpusIsRealistic(t *testing.T) {
	const n = 20_000
	mems := newGenerator(7, 40, true).take(n)
	uuids := map[string]int{}
	kinds := map[journal.Kind]int{}
	agents := map[string]int{}
	var links, supersedes, conflicts, forward, entities, shared int
	for i := range mems {
		m := &mems[i]
		if err := m.Validate(); err != nil {
			t.Fatalf("record %d is invalid: %v\n%s", i, err, m.Canonical())
		}
		if _, dup := uuids[m.UUID]; dup {
			t.Fatalf("uuid %s repeats", m.UUID)
		}
		if i > 0 && m.TS.Before(mems[i-1].TS) {
			t.Fatalf("record %d goes back in time", i)
		}
		uuids[m.UUID] = i
		kinds[m.Kind]++
		agents[m.Agent]++
		if m.Scope == journal.ScopeShared {
			shared++
		}
		if len(m.AllEntities()) > 0 {
			entities++
		}
		if !strings.HasPrefix(m.Path, "agents/"+m.Agent+"/memory/journal/") || m.Path != journalPath(m.Agent, m.TS) {
			t.Fatalf("record %d has path %s", i, m.Path)
		}
		links += len(m.Links)
		supersedes += len(m.Supersedes)
		conflicts += len(m.ConflictsWith)
	}
	for i := range mems {
		for _, ids := range [][]string{mems[i].Links, mems[i].Supersedes, mems[i].ConflictsWith} {
			for _, id := range ids {
				j, ok := uuids[id]
				if ok && j > i {
					forward++
				}
			}
		}
	}
	for _, k := range journal.Kinds {
		switch {
		case k == journal.KindPromotion && kinds[k] != 0:
			t.Errorf("%d promotion records: only memsync writes those (journal.CheckOwner rejects an agent's)", kinds[k])
		case k != journal.KindPromotion && kinds[k] == 0:
			t.Errorf("no record of kind %s", k)
		}
	}
	if len(agents) < 30 {
		t.Errorf("only %d of 40 agents wrote", len(agents))
	}
	counts := make([]int, 0, len(agents))
	for _, c := range agents {
		counts = append(counts, c)
	}
	sort.Ints(counts)
	if counts[len(counts)-1] < 5*counts[len(counts)/2] {
		t.Errorf("agent activity is not skewed: busiest %d, median %d", counts[len(counts)-1], counts[len(counts)/2])
	}
	for name, c := range map[string]struct{ got, min, max int }{
		"links": {links, n / 5, n}, "supersedes": {supersedes, n / 30, n / 5}, "conflicts": {conflicts, n / 60, n / 10},
		"forward references": {forward, n / 500, n / 20}, "records with entities": {entities, n / 5, n},
		"shared records": {shared, n / 5, n / 2},
	} {
		if c.got < c.min || c.got > c.max {
			t.Errorf("%s: %d, want %d..%d", name, c.got, c.min, c.max)
		}
	}
}

func TestWriteJournalsMatchesRecords(t *testing.T) {
	dir := t.TempDir()
	const n = 5000
	if err := writeJournals(dir, newGenerator(42, 12, true), n); err != nil {
		t.Fatal(err)
	}
	want := newGenerator(42, 12, true).take(n)
	lines := 0
	for i := range want {
		m := &want[i]
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(m.Path)))
		if err != nil {
			t.Fatal(err)
		}
		got := bytes.Split(b, []byte("\n"))[m.Line-1]
		if !bytes.Equal(got, m.Canonical()) {
			t.Fatalf("%s:%d is\n%s\nwant\n%s", m.Path, m.Line, got, m.Canonical())
		}
		rec, err := journal.Parse(got)
		if err != nil || rec.Hash() != m.Hash() {
			t.Fatalf("%s:%d does not parse back to the record: %v", m.Path, m.Line, err)
		}
	}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		lines += bytes.Count(b, []byte("\n"))
		return err
	})
	if err != nil || lines != n {
		t.Errorf("journals hold %d lines (%v), want %d", lines, err, n)
	}
}

func TestSearchQueries(t *testing.T) {
	agents := agentNames(5)
	a := searchQueries(1, 200, agents)
	b := searchQueries(1, 200, agents)
	for i := range a {
		words := strings.Fields(a[i].Text)
		if len(words) < 1 || len(words) > 3 || a[i].Text != b[i].Text {
			t.Fatalf("query %d: %q vs %q", i, a[i].Text, b[i].Text)
		}
		if len(a[i].Groups) != 2 || a[i].Groups[0] != journal.SharedGroup || !strings.HasPrefix(a[i].Groups[1], "AGENT:") {
			t.Fatalf("query %d groups: %v", i, a[i].Groups)
		}
	}
}
