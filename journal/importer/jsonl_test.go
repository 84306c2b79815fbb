package importer

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

// TestImportJSONLReownsAndRemaps: a journal of agent alice imported into
// agent a: every memory re-owned to a (its uuid, agent and scope a's),
// with its text, kind, time, entities, tags and why; links and supersedes
// name the copies of their targets, a link to a record not in the source
// is reported and left out, memsync's own feedback is skipped, the old
// uuid kept as origin_uuid; a second import writes nothing.
func TestImportJSONLReownsAndRemaps(t *testing.T) {
	opts := repoFor(t, "jsonl", fixture("jsonl"))
	opts.IncludePrivate = true // moving alice into a
	rep, err := importNow(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Imported != 3 || rep.Superseded != 1 || len(rep.Unresolved) != 1 || len(rep.Skipped) != 1 || len(rep.Unparsable) != 0 {
		t.Fatalf("report: %+v", rep)
	}
	byOrigin := map[string]journal.Record{}
	for _, l := range lines(t, opts) {
		r, err := journal.Parse([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		if owner, ok := journal.UUIDOwner(r.UUID); !ok || owner != "a" || r.Agent != "a" || r.Scope != journal.ScopePrivate {
			t.Errorf("not re-owned to a: %s %s %s", r.UUID, r.Agent, r.Scope)
		}
		byOrigin[extraString(&r, FieldOriginUUID)] = r
	}
	a1, a2, a3 := byOrigin["mem_20250301T100000Z_alice_a1"], byOrigin["mem_20250302T100000Z_alice_a2"], byOrigin["mem_20250303T100000Z_alice_a3"]
	if a2.Kind != journal.KindDecision || a2.Why != "fewer retries" || !slices.Equal(a2.Entities, []string{"billing-service", "ledger"}) ||
		!a2.TS.Equal(time.Date(2025, 3, 2, 10, 0, 0, 0, time.UTC)) || !slices.Equal(a2.Links, []string{a1.UUID}) {
		t.Errorf("a2: %+v", a2)
	}
	if !slices.Equal(a3.Supersedes, []string{a1.UUID}) || len(a3.Links) != 0 {
		t.Errorf("a3: supersedes %v links %v", a3.Supersedes, a3.Links)
	}
	if !slices.Equal(a1.Tags, []string{"infra"}) {
		t.Errorf("a1 tags %v", a1.Tags)
	}
	again, err := importNow(context.Background(), opts)
	if err != nil || again.Imported != 0 {
		t.Fatalf("second import: %+v %v", again, err)
	}
}

// TestImportJSONLIntoItsOwnAgent: an agent's own journal read back into
// it writes nothing (the uuids are there already).
func TestImportJSONLIntoItsOwnAgent(t *testing.T) {
	opts := repoFor(t, "jsonl", "")
	line := `{"uuid":"mem_20250301T100000Z_a_x1","ts":"2025-03-01T10:00:00Z","agent":"a","kind":"fact","scope":"private","text":"mine"}` + "\n"
	must(t, os.WriteFile(filepath.Join(opts.JournalDir, "2025-03-01.jsonl"), []byte(line), 0o644))
	opts.Path = filepath.Join(opts.JournalDir, "2025-03-01.jsonl")
	rep, err := importNow(context.Background(), opts)
	if err != nil || rep.Imported != 0 || len(rep.Skipped) != 1 || rep.Skipped[0].Reason != SkipAlreadyImported {
		t.Fatalf("%+v %v", rep, err)
	}
}

// TestImportJSONLStaysInItsSource: in a directory, a .jsonl that is a
// symbolic link (out or in), a FIFO or a device, or a linked directory, is
// not read, and said; a line over the limit is a problem, the rest read.
func TestImportJSONLStaysInItsSource(t *testing.T) {
	outside := t.TempDir()
	secret := `{"uuid":"mem_20250301T100000Z_z_s1","ts":"2025-03-01T10:00:00Z","agent":"z","kind":"fact","scope":"private","text":"the outside secret"}` + "\n"
	must(t, os.WriteFile(filepath.Join(outside, "secret.jsonl"), []byte(secret), 0o644))
	good := `{"uuid":"mem_20250302T100000Z_z_g1","ts":"2025-03-02T10:00:00Z","agent":"z","kind":"fact","scope":"private","text":"inside"}` + "\n"
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string)
		want int
	}{
		{"link out", func(t *testing.T, d string) {
			must(t, os.Symlink(filepath.Join(outside, "secret.jsonl"), filepath.Join(d, "x.jsonl")))
		}, 0},
		{"dir link out", func(t *testing.T, d string) { must(t, os.Symlink(outside, filepath.Join(d, "sub"))) }, 0},
		{"fifo", func(t *testing.T, d string) { must(t, syscall.Mkfifo(filepath.Join(d, "x.jsonl"), 0o644)) }, 0},
		{"/dev/zero", func(t *testing.T, d string) { must(t, os.Symlink("/dev/zero", filepath.Join(d, "x.jsonl"))) }, 0},
		{"long line", func(t *testing.T, d string) {
			must(t, os.WriteFile(filepath.Join(d, "x.jsonl"), []byte(strings.Repeat("x", maxJSONLLine+10)+"\n"+good), 0o644))
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			tc.make(t, src)
			opts := repoFor(t, "jsonl", src)
			opts.IncludePrivate = true
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			rep, err := importNow(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Imported != tc.want {
				t.Fatalf("imported %d, want %d: %+v", rep.Imported, tc.want, rep)
			}
			if tc.name != "dir link out" && len(rep.Skipped)+len(rep.Unparsable) == 0 {
				t.Errorf("the report does not say what was not read: %+v", rep)
			}
			for _, l := range lines(t, opts) {
				if strings.Contains(l, "outside secret") {
					t.Fatalf("read from outside the source: %s", l)
				}
			}
		})
	}
}

// FuzzJSONLLines holds the jsonl parser to the importer's promises on
// any input: no panic, problems placed, planned records valid.
func FuzzJSONLLines(f *testing.F) {
	f.Add(`{"uuid":"mem_20250301T100000Z_a_x1","ts":"2025-03-01T10:00:00Z","agent":"a","kind":"fact","scope":"private","text":"t"}`)
	f.Add(`{"uuid":"x"}` + "\n\n{")
	f.Add(`{"uuid":"mem_20250301T100000Z_a_x1","ts":"2025-03-01T10:00:00Z","agent":"a","kind":"fact","scope":"private","text":"t","links":["mem_20250301T100000Z_a_x1"],"supersedes":["mem_20250301T100000Z_a_x1"],"origin_uuid":7}`)
	f.Fuzz(func(t *testing.T, data string) {
		fuzzFile(t, "jsonl", "export.jsonl", data, func(f sourceFile, out *Source) {
			if err := jsonlLines(strings.NewReader(f.data), f.rel, out); err != nil {
				t.Fatal(err)
			}
		})
	})
}

// TestImportJSONLNeverSharesAPrivateRecord: with --scope shared, the
// shared records of the source are shared, its private ones stay private
// (fails before: every record took the import's scope).
func TestImportJSONLNeverSharesAPrivateRecord(t *testing.T) {
	opts := repoFor(t, "jsonl", fixture("jsonl"))
	opts.Scope = journal.ScopeShared
	opts.IncludePrivate = true
	if _, err := importNow(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	for _, l := range lines(t, opts) {
		r, err := journal.Parse([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		want := journal.ScopePrivate
		if extraString(&r, FieldOriginUUID) == "mem_20250302T100000Z_alice_a2" {
			want = journal.ScopeShared
		}
		if r.Scope != want {
			t.Errorf("%s (%q): scope %s, want %s", r.UUID, r.Text, r.Scope, want)
		}
	}
}

// TestImportJSONLLeavesAnothersPrivate: alice's journal imported into a
// without IncludePrivate brings only what alice shared: her private
// records are skipped, each reported with its owner, and the shared
// decision's link to one of them is reported and left out; her own
// private records read back into alice herself are hers to import.
func TestImportJSONLLeavesAnothersPrivate(t *testing.T) {
	for _, tc := range []struct {
		name, agent       string
		include           bool
		imported, private int
	}{
		{"another agent", "a", false, 1, 2},
		{"another agent, moved", "a", true, 3, 0},
		{"the agent itself", "alice", false, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := repoFor(t, "jsonl", fixture("jsonl"))
			opts.Agent, opts.IncludePrivate = tc.agent, tc.include
			opts.JournalDir = filepath.Join(opts.Root, "agents", tc.agent, "memory", "journal")
			rep, err := importNow(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			private := 0
			for _, s := range rep.Skipped {
				if s.Reason == SkipOthersPrivate {
					private++
					if !strings.Contains(s.Source, "(alice)") {
						t.Errorf("skip %q does not name the owner", s.Source)
					}
				}
			}
			if rep.Imported != tc.imported || private != tc.private {
				t.Fatalf("imported %d, skipped as private %d; want %d, %d: %+v", rep.Imported, private, tc.imported, tc.private, rep)
			}
			for _, l := range lines(t, opts) {
				if !tc.include && tc.agent != "alice" && strings.Contains(l, "Postgres") {
					t.Errorf("alice's private memory reached %s: %s", tc.agent, l)
				}
			}
		})
	}
}
