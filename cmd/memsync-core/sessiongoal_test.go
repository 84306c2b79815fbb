package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/cmd/internal/hooks"
	"github.com/memsync/memsync/journal"
)

// TestHookSessionStartAboutTheProject (issue 49 item 2): with more
// preferences and procedures about sessions than a packet holds, the
// SessionStart packet of a session in the billing project leads with the
// billing preference and procedure, not the ones that share the words
// of the old goal ("start of session S in /home/dev/billing"). On the
// code before, both were left out.
func TestHookSessionStartAboutTheProject(t *testing.T) {
	repo := newRepo(t, "planner")
	var recs []journal.Record
	for i := range 6 {
		recs = append(recs, srec("mem_pref_session_"+string(rune('a'+i)), "planner", 10+i,
			"at the start of every session read the session notes, part "+string(rune('a'+i)), sShared, ofKind(journal.KindPreference)))
	}
	for i := range 4 {
		recs = append(recs, srec("mem_proc_session_"+string(rune('a'+i)), "planner", 20+i,
			"session start: open the session log, step "+string(rune('a'+i)), sShared, ofKind(journal.KindProcedure)))
	}
	recs = append(recs,
		srec("mem_pref_billing", "planner", 1, "never run the billing migration on a Friday", sShared, ofKind(journal.KindPreference)),
		srec("mem_proc_billing", "planner", 2, "billing migration checklist: dry-run it against a copy first", sShared, ofKind(journal.KindProcedure)),
		srec("mem_task_billing", "planner", 3, "Follow up on the billing migration with Mira", sShared, ofKind(journal.KindTask)),
	)
	for _, r := range recs {
		path := filepath.Join(layout(repo).JournalDir(r.Agent), journal.FileName(r.TS))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(append(r.Canonical(), '\n')); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	syncRepo(t, repo)
	for _, host := range hooks.Hosts() {
		t.Run(host, func(t *testing.T) {
			a := runHookEvent(t, repo, host, "SessionStart", hookPayload(host, "SessionStart", "about-"+host, nil))
			var goal string
			var prefs, procs []string
			section := ""
			for _, line := range strings.Split(a.context, "\n") {
				switch {
				case strings.HasPrefix(line, "Goal: "):
					goal = line
				case strings.HasPrefix(line, "## "):
					section = line
				case strings.HasPrefix(line, "- ") && section == "## Hard constraints":
					prefs = append(prefs, line)
				case strings.HasPrefix(line, "- ") && section == "## Procedures to follow":
					procs = append(procs, line)
				}
			}
			if strings.Contains(goal, "session") || !strings.HasPrefix(goal, "Goal: billing") {
				t.Fatalf("goal %q:\n%s", goal, a.context)
			}
			if len(prefs) == 0 || !strings.Contains(prefs[0], "mem_pref_billing") || len(procs) == 0 || !strings.Contains(procs[0], "mem_proc_billing") {
				t.Fatalf("constraints %v, procedures %v, want the billing ones first:\n%s", prefs, procs, a.context)
			}
			if !slices.ContainsFunc(strings.Split(a.context, "\n"), func(l string) bool { return strings.Contains(l, "mem_task_billing") }) {
				t.Fatalf("the open follow-up is not shown:\n%s", a.context)
			}
		})
	}
}
