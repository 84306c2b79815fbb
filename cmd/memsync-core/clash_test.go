package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	core "github.com/memsync/memsync/memsync"
)

// clashRig is a memory repository driven through the built binary against
// one backend, with a way to read back what the graph holds.
type clashRig struct {
	t    *testing.T
	repo string
	env  []string
	dump func() []string // every node, in uuid order (graphtest.Dump)
}

// eachClashBackend runs fn against the embedded store and, when one is
// configured, Neo4j.
func eachClashBackend(t *testing.T, agents []string, fn func(t *testing.T, r *clashRig)) {
	t.Run("embedded", func(t *testing.T) {
		r := &clashRig{t: t, repo: newRepo(t, agents...), env: []string{"MEMSYNC_GRAPH=embedded"}}
		r.dump = func() []string {
			g, err := embedded.Open(localDir(r.repo), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			return graphtest.Dump(t, g)
		}
		fn(t, r)
	})
	t.Run("neo4j", func(t *testing.T) {
		g := neo4jtest.Open(t) // holds the server for this test, empty
		r := &clashRig{t: t, repo: newRepo(t, agents...),
			env:  []string{"MEMSYNC_GRAPH=neo4j", "MEMSYNC_NEO4J_URI=" + os.Getenv("MEMSYNC_NEO4J_URI")},
			dump: func() []string { return graphtest.Dump(t, g) }}
		fn(t, r)
	})
}

// run runs the binary with the rig's backend and repository.
func (r *clashRig) run(extraEnv []string, args ...string) result {
	r.t.Helper()
	cmd := exec.Command(memsyncBinary(r.t), args...)
	cmd.Env = append(append(os.Environ(), "MEMSYNC_REPO="+r.repo, "MEMSYNC_GRAPH="), r.env...)
	cmd.Env = append(cmd.Env, extraEnv...) // last one wins
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatalf("memsync %s: %v", strings.Join(args, " "), err)
	}
	return result{code, out.String(), errOut.String()}
}

func (r *clashRig) mustRun(args ...string) string {
	r.t.Helper()
	res := r.run(nil, args...)
	if res.code != 0 {
		r.t.Fatalf("memsync %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), res.code, res.stdout, tail(res.stderr, 3000))
	}
	return res.stdout
}

// write appends raw lines to agent's journal for day, each in one write,
// as a tool writing lines directly does.
func (r *clashRig) write(agent, day string, recs ...journal.Record) {
	r.t.Helper()
	path := filepath.Join(journalDir(r.repo, agent), day+".jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	for _, rec := range recs {
		if _, err := f.Write(append(rec.Canonical(), '\n')); err != nil {
			r.t.Fatal(err)
		}
	}
}

// search runs memsync search --json as agent; offline forces the journals
// path by pointing memsync at a graph that cannot be reached.
func (r *clashRig) search(agent, query string, offline bool) searchResult {
	r.t.Helper()
	var env []string
	if offline {
		env = []string{"MEMSYNC_GRAPH=neo4j", "MEMSYNC_NEO4J_URI=bolt://127.0.0.1:1"}
	}
	res := r.run(env, "search", "--json", "--agent", agent, "--limit", "50", query)
	var doc searchResult
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &doc) != nil {
		r.t.Fatalf("search: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if doc.Offline != offline {
		r.t.Fatalf("search offline = %v, want %v (%s)", doc.Offline, offline, doc.Reason)
	}
	return doc
}

func (r *clashRig) verify() (core.VerifyReport, int) {
	r.t.Helper()
	res := r.run(nil, "verify", "--json")
	var rep core.VerifyReport
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		r.t.Fatalf("verify --json: exit %d: %v\n%s\n%s", res.code, err, res.stdout, res.stderr)
	}
	return rep, res.code
}

// rebuildMatches rebuilds the graph from the journals and checks that it
// is the graph the live passes built.
func (r *clashRig) rebuildMatches() {
	r.t.Helper()
	live := r.dump()
	r.mustRun("rebuild", "--yes")
	if rebuilt := r.dump(); !slices.Equal(live, rebuilt) {
		r.t.Fatalf("the rebuilt graph differs from the live one:\nlive:\n%s\nrebuilt:\n%s",
			strings.Join(live, "\n"), strings.Join(rebuilt, "\n"))
	}
}

func hitUUIDs(doc searchResult) []string {
	var out []string
	for _, h := range doc.Results {
		out = append(out, h.UUID+"@"+h.Agent+"/"+h.Scope)
	}
	return out
}

// Agent a writes b's predictable next uuids (back-dated, shared) into its
// own journal before b appends. b's appends are all projected, a's lines
// are rejected as naming another agent, nobody sees a's text under b's
// uuids, verify names the conflicts, and a rebuild gives the live graph.
func TestUUIDSquattingIsRejected(t *testing.T) {
	eachClashBackend(t, []string{"a", "b", "c"}, func(t *testing.T, r *clashRig) {
		const ts = "2026-11-21T09:00:00Z"
		pinHost(t, r.repo)
		uuids := make([]string, 3)
		for i := range uuids {
			// b's host id is in every uuid b writes: as predictable.
			uuids[i] = fmt.Sprintf("mem_20261121T090000Z_b_%s-%04d", testHost, i+1)
			r.write("a", "2026-11-20", journal.Record{UUID: uuids[i], TS: time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC), Agent: "a",
				Kind: journal.KindFact, Scope: journal.ScopeShared, Text: fmt.Sprintf("squatted walrus %d", i)})
		}
		r.mustRun("sync", "--once")
		for i := range uuids {
			// memsync append now adds a random part (issue 25 §2), so
			// the squat no longer even hits b's uuid; the squatted
			// lines are rejected all the same.
			got := strings.TrimSpace(r.mustRun("append", "--agent", "b", "--kind", "fact", "--ts", ts, fmt.Sprintf("b's own walrus %d", i)))
			randomized(t, got, uuids[i])
		}
		r.mustRun("sync", "--once")
		if doc := r.search("b", "walrus", false); len(doc.Results) != 3 || slices.ContainsFunc(doc.Results, func(h searchHit) bool { return h.Agent != "b" }) {
			t.Fatalf("b finds %v, want its 3 records", hitUUIDs(doc))
		}
		for _, offline := range []bool{false, true} {
			if doc := r.search("c", "walrus", offline); len(doc.Results) != 0 {
				t.Fatalf("offline %v: c finds %v, want nothing", offline, hitUUIDs(doc))
			}
		}
		// The other order: b's record is projected, then a back-dates a
		// shared line under its uuid into an earlier day's file.
		own := strings.TrimSpace(r.mustRun("append", "--agent", "b", "--kind", "fact", "--ts", ts, "b's fourth walrus"))
		r.mustRun("sync", "--once")
		r.write("a", "2026-11-19", journal.Record{UUID: own, TS: time.Date(2026, 11, 19, 8, 0, 0, 0, time.UTC), Agent: "a",
			Kind: journal.KindFact, Scope: journal.ScopeShared, Text: "back-dated walrus"})
		r.mustRun("sync", "--once")
		if doc := r.search("c", "walrus", false); len(doc.Results) != 0 {
			t.Fatalf("c finds %v after the back-dated squat, want nothing", hitUUIDs(doc))
		}
		// The graph holds exactly what the journals project: verify is ok
		// and exits 0, and names the squatting lines as rejected lines,
		// with their reason, not as conflicts (issue 25 §7).
		rep, code := r.verify()
		if code != exitOK || !rep.OK || rep.Conflicts != 0 || rep.Missing != 0 || rep.Different != 0 || rep.Extra != 0 ||
			rep.Lines != 8 || rep.Projected != 4 || rep.Rejected != 4 || rep.Unaccounted != 0 ||
			len(rep.RejectedLines) != 4 || !strings.Contains(rep.RejectedLines[0].Reason, "names agent b") {
			t.Fatalf("verify = exit %d %+v, want ok: 4 lines projected and 4 rejected, no conflict", code, rep)
		}
		out := r.run(nil, "verify")
		for _, want := range []string{"ok: 4 journal records, 4 in the graph", "conflicts 0", "rejected 4",
			"rejected agents/a/memory/journal/2026-11-19.jsonl:1: field \"uuid\": " + own + " names agent b, but the journal belongs to a"} {
			if !strings.Contains(out.stdout, want) || out.code != exitOK {
				t.Fatalf("verify (exit %d) lacks %q:\n%s", out.code, want, out.stdout)
			}
		}
		r.rebuildMatches()
	})
}

// A private record re-written later, with its uuid and scope shared, in an
// earlier day's file: the private version wins on every path, so b never
// finds it — online, offline, or online after a rebuild.
func TestPrivateRecordNeverLeaksThroughAClash(t *testing.T) {
	eachClashBackend(t, []string{"a", "b"}, func(t *testing.T, r *clashRig) {
		uuid := strings.TrimSpace(r.mustRun("append", "--agent", "a", "--kind", "fact", "--ts", "2026-11-21T09:00:00Z",
			"the launch code is zebra"))
		r.mustRun("sync", "--once")
		r.write("a", "2026-11-20", journal.Record{UUID: uuid, TS: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC), Agent: "a", Kind: journal.KindFact,
			Scope: journal.ScopeShared, Text: "the launch code is zebra"})
		r.mustRun("sync", "--once")
		check := func(when string) {
			t.Helper()
			for _, offline := range []bool{false, true} {
				if doc := r.search("b", "zebra", offline); len(doc.Results) != 0 {
					t.Fatalf("%s, offline %v: b finds %v", when, offline, hitUUIDs(doc))
				}
				doc := r.search("a", "zebra", offline)
				if got := hitUUIDs(doc); !slices.Equal(got, []string{uuid + "@a/private"}) ||
					doc.Results[0].Path != "agents/a/memory/journal/2026-11-21.jsonl" {
					t.Fatalf("%s, offline %v: a finds %v, want its private record", when, offline, got)
				}
			}
		}
		check("live")
		r.rebuildMatches()
		check("after rebuild")
		if rep, code := r.verify(); code != exitFail || rep.Conflicts != 1 || rep.Missing != 0 || rep.Different != 0 ||
			rep.Projected != 1 || rep.Rejected != 1 || !slices.Equal(rep.ConflictUUIDs, []string{uuid}) {
			t.Fatalf("verify = exit %d %+v, want the conflict on %s", code, rep, uuid)
		}
	})
}

// verify accounts for every line: a record that lost its uuid to other
// content, and a line no pass projected yet, make it fail and say so.
func TestVerifyAccountsForEveryLine(t *testing.T) {
	r := &clashRig{t: t, repo: newRepo(t, "a"), env: []string{"MEMSYNC_GRAPH=embedded"}}
	first := journal.Record{UUID: "mem_20261121T090000Z_a_0001", TS: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), Agent: "a", Kind: journal.KindFact, Text: "first record"}
	second := first
	second.Text = "a second record that reused the uuid"
	second.TS = second.TS.Add(500 * time.Millisecond) // later: it loses the uuid
	r.write("a", "2026-11-21", first, second)
	r.mustRun("sync", "--once")
	rep, code := r.verify()
	if code != exitFail || rep.OK || rep.Conflicts != 1 || rep.Lines != 2 || rep.Projected != 1 || rep.Rejected != 1 ||
		rep.Unaccounted != 0 || len(rep.RejectedLines) != 1 || rep.RejectedLines[0].Line != 2 ||
		!strings.Contains(rep.RejectedLines[0].Reason, "wins the uuid") {
		t.Fatalf("verify = exit %d %+v, want the lost second record as a conflict", code, rep)
	}
	out := r.run(nil, "verify").stdout
	for _, want := range []string{"DIFFERS", "conflicts 1", "lines 2: projected 1, duplicates 0, rejected 1, unaccounted 0",
		"conflicts: mem_20261121T090000Z_a_0001", "rejected agents/a/memory/journal/2026-11-21.jsonl:2:"} {
		if !strings.Contains(out, want) {
			t.Fatalf("verify text lacks %q:\n%s", want, out)
		}
	}
	// A line written after the last pass is unaccounted for until one runs.
	r.mustRun("append", "--agent", "a", "--kind", "fact", "--ts", "2026-11-21T10:00:00Z", "not projected yet")
	if rep, _ := r.verify(); rep.Unaccounted != 1 || rep.Missing != 1 || rep.Lines != 3 {
		t.Fatalf("verify = %+v, want 1 line unaccounted", rep)
	}
	r.mustRun("sync", "--once")
	if rep, _ := r.verify(); rep.Unaccounted != 0 || rep.Missing != 0 || rep.Projected != 2 || rep.Conflicts != 1 {
		t.Fatalf("verify = %+v, want 2 projected, the conflict still reported", rep)
	}
}

// TestClashLoserNeverShown is issue 51 §3: a's private record, and an
// earlier-dated line holding its uuid with other content, shared. The
// private version wins the uuid; list and show never give b the losing
// shared version, from the graph or from the journals, and a's show and
// list give the winning one.
func TestClashLoserNeverShown(t *testing.T) {
	eachClashBackend(t, []string{"a", "b"}, func(t *testing.T, r *clashRig) {
		uuid := strings.TrimSpace(r.mustRun("append", "--agent", "a", "--kind", "fact", "--ts", "2026-11-21T09:00:00Z",
			"the vault combination is 1-2-3"))
		r.write("a", "2026-11-20", journal.Record{UUID: uuid, TS: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC), Agent: "a", Kind: journal.KindFact,
			Scope: journal.ScopeShared, Text: "the losing shared version names the vault"})
		r.mustRun("sync", "--once")
		for _, offline := range []bool{false, true} {
			var env []string
			if offline {
				env = []string{"MEMSYNC_GRAPH=neo4j", "MEMSYNC_NEO4J_URI=bolt://127.0.0.1:1"}
			}
			if res := r.run(env, "list", "--agent", "b", "--json"); res.code != 0 || strings.Contains(res.stdout, uuid) || strings.Contains(res.stdout, "losing shared") {
				t.Errorf("offline %v: b's list: exit %d\n%s", offline, res.code, res.stdout)
			}
			if res := r.run(env, "show", uuid, "--agent", "b", "--json"); res.code == 0 || strings.Contains(res.stdout, "losing shared") {
				t.Errorf("offline %v: b's show: exit %d\n%s", offline, res.code, res.stdout)
			}
			if res := r.run(env, "show", uuid, "--agent", "a", "--json"); res.code != 0 || !strings.Contains(res.stdout, "1-2-3") {
				t.Errorf("offline %v: a's show: exit %d\n%s%s", offline, res.code, res.stdout, res.stderr)
			}
			if res := r.run(env, "list", "--agent", "a", "--json"); res.code != 0 || !strings.Contains(res.stdout, "1-2-3") || strings.Contains(res.stdout, "losing shared") {
				t.Errorf("offline %v: a's list: exit %d\n%s", offline, res.code, res.stdout)
			}
		}
	})
}
