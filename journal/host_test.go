package journal_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

func TestHostID(t *testing.T) {
	root := t.TempDir()
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids { // processes appending at once on a fresh clone agree
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := journal.HostID(root)
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || !journal.ValidHostID(id) {
			t.Fatalf("host ids %q: want one valid id", ids)
		}
	}
	if again, err := journal.HostID(root); err != nil || again != ids[0] {
		t.Fatalf("HostID again = %q, %v; want the stable %q", again, err, ids[0])
	}
	if other, err := journal.HostID(t.TempDir()); err != nil || other == ids[0] {
		t.Fatalf("another clone's host id = %q, %v; want a different one", other, err)
	}
	bad := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bad, ".memsync"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, filepath.FromSlash(journal.HostFile)), []byte("Not_Valid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, err := journal.HostID(bad); err == nil {
		t.Fatalf("HostID of a damaged file = %q, want an error naming it", id)
	}
}

// Two hosts append for the same agent in the same second, each to its own
// clone (as before they exchange): the uuids never collide, and each still
// names its agent. Without host ids both hosts wrote
// mem_<second>_<agent>_0001, the same uuid with different content.
func TestAppendUUIDsUniqueAcrossHosts(t *testing.T) {
	ts := time.Date(2026, 11, 21, 10, 15, 0, 0, time.UTC)
	seen := map[string]string{}
	for h, host := range []string{"laptop1", "macmini"} {
		clone := t.TempDir()
		for i := 0; i < 3; i++ {
			rec := journal.Record{TS: ts, Agent: "planner", Kind: journal.KindFact, Text: "same second, host " + host}
			opts := journal.AppendOptions{NoSync: true, Host: host, SequenceFile: filepath.Join(clone, ".memsync", "sequence", "planner")}
			if _, err := journal.Append(filepath.Join(clone, "journal"), &rec, opts); err != nil {
				t.Fatal(err)
			}
			if prev, dup := seen[rec.UUID]; dup {
				t.Fatalf("host %d wrote %s, which %s wrote too", h, rec.UUID, prev)
			}
			seen[rec.UUID] = host
			if agent, ok := journal.UUIDOwner(rec.UUID); !ok || agent != "planner" {
				t.Errorf("UUIDOwner(%s) = %q, %v", rec.UUID, agent, ok)
			}
		}
	}
	rec := journal.Record{TS: ts, Agent: "planner", Kind: journal.KindFact, Text: "x"}
	if _, err := journal.Append(t.TempDir(), &rec, journal.AppendOptions{NoSync: true, Host: "Bad_Host"}); err == nil {
		t.Fatalf("an invalid host id was accepted")
	}
}
