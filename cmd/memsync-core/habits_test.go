package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestCLIHabits: the habits of git and gh, through the built binary, one
// line each: what a person types and what they read back.
func TestCLIHabits(t *testing.T) {
	repo := hookRepo(t)
	decision := uuidOf(t, repo, "planner", "Use #postgres")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // a substring of stdout
		stderr string // a substring of stderr
		never  string // must not appear on stderr
	}{
		{"version as a command", []string{"version"}, 0, "memsync ", "", ""},
		{"--repo before the command", []string{"--repo", repo, "status"}, 0, "planner", "", ""},
		{"--json before the command", []string{"--json", "--repo", repo, "status"}, 0, `"agents"`, "", ""},
		{"a bad number names the flag with two dashes", []string{"search", "x", "--agent", "planner", "--limit", "abc", "--repo", repo}, 2,
			"", `--limit: invalid value "abc": want a whole number`, "flag -limit"},
		{"an unknown flag", []string{"sync", "--commit-interval", "1s", "--repo", repo}, 2, "", "unknown flag --commit-interval", "flag provided"},
		{"a flag without its value", []string{"search", "x", "--repo", repo, "--agent"}, 2, "", "--agent needs a value", "needs an argument"},
		{"--since says the forms it takes", []string{"search", "x", "--agent", "planner", "--since", "soon", "--repo", repo}, 2,
			"", "today, yesterday, an age (36h, 7d, 2w)", "2006-01-02"},
		{"--since yesterday", []string{"search", "billing", "--agent", "planner", "--since", "yesterday", "--repo", repo}, 0, "", "", ""},
		{"did you mean, for the start of a name", []string{"rejects", "--agent", "crit", "--repo", repo}, 2, "", "did you mean critic?", "create it"},
		{"one memory, not 1 memories", []string{"list", "--agent", "planner", "--limit", "1", "--repo", repo}, 0, "1 memory visible to planner", "", ""},
		{"append's help gives the uuid it writes", []string{"append", "--help"}, 0, "<host>-<NNNN>-<random>", "", ""},
		{"flag says what it flagged", []string{"flag", decision, "--important", "--by", "Shaun", "--agent", "planner", "--repo", repo}, 0,
			"mem_", "flagged " + decision + " important (by Shaun): \"Use #postgres", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(memsyncBinary(t), tc.args...)
			// hookRepo projected into the embedded store: the graph env of a
			// Neo4j CI run must not point these reads elsewhere.
			cmd.Env = append(cmd.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH=", "MEMSYNC_NEO4J_URI=")
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			code := 0
			if err := cmd.Run(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				code = ee.ExitCode()
			}
			if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errOut.String(), tc.stderr) ||
				tc.never != "" && strings.Contains(errOut.String(), tc.never) {
				t.Errorf("memsync %q: exit %d\nstdout %q\nstderr %q\nwant exit %d, stdout with %q, stderr with %q and without %q",
					tc.args, code, out.String(), errOut.String(), tc.code, tc.stdout, tc.stderr, tc.never)
			}
		})
	}
}
