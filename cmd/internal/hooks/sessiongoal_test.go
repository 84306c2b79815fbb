package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// TestSessionGoal (issue 49 item 2): a session's planner packet looks for
// what the session is about (the project, the agent's open follow-ups and
// decisions no outcome judged, its newest episodes), never for the words
// of a template ("start of session ... in ...").
func TestSessionGoal(t *testing.T) {
	work := t.TempDir()
	tree := filepath.Join(work, "acme-billing")
	sub := filepath.Join(tree, "cmd", "server")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(tree, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	mem := func(uuid string, kind journal.Kind, text string, links ...string) memsync.Memory {
		return memsync.Memory{Record: journal.Record{UUID: uuid, Kind: kind, Text: text, Links: links}}
	}
	task := mem("t1", journal.KindTask, "Follow up on the #billing migration with @Mira")
	open := mem("d1", journal.KindDecision, "Use #postgres for the billing service")
	judged := mem("d2", journal.KindDecision, "Cache invoices in redis")
	outcome := mem("o1", journal.KindOutcome, "redis held", "d2")
	fact := mem("f1", journal.KindFact, "Deploys happen on\nTuesdays")
	flag := mem("fb", journal.KindFeedback, "important")
	pref := mem("p1", journal.KindPreference, "at the start of every session read the notes")
	long := mem("l1", journal.KindObservation, strings.Repeat("word ", 100))
	for _, tc := range []struct {
		name         string
		cwd          string
		tasks        []memsync.Memory
		recent       []memsync.Memory // newest first
		want         string
		wantNotParts []string
	}{
		{"git toplevel's name, from a subdirectory", sub, nil, nil, "acme-billing", nil},
		{"a directory this host does not have", "/home/dev/billing", nil, nil, "billing", nil},
		{"no directory, no records: the agent", "", nil, nil, "planner", nil},
		{"the root", "/", nil, nil, "planner", nil},
		{"follow-ups, open decisions, newest records, once each", "/home/dev/billing", []memsync.Memory{task},
			[]memsync.Memory{flag, pref, outcome, fact, judged, open},
			"billing · Follow up on the #billing migration with @Mira · Use #postgres for the billing service · redis held · Deploys happen on Tuesdays · Cache invoices in redis",
			[]string{"important", "notes"}},
		{"long texts are cut", "", nil, []memsync.Memory{long}, strings.TrimSpace(strings.Repeat("word ", 32)) + "…", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sessionGoal("planner", tc.cwd, tc.tasks, tc.recent)
			if strings.HasPrefix(tc.want, "word") {
				if !strings.HasSuffix(got, "…") || len([]rune(got)) != goalPartRunes {
					t.Fatalf("goal %q (%d runes)", got, len([]rune(got)))
				}
				return
			}
			if got != tc.want {
				t.Fatalf("goal %q, want %q", got, tc.want)
			}
			for _, w := range append(tc.wantNotParts, "start of session", " in /") {
				if strings.Contains(got, w) {
					t.Fatalf("goal %q holds %q", got, w)
				}
			}
		})
	}
}
