package e2e

import (
	"strings"
	"testing"
)

// TestCheckerSeesDroppedOutput is the test of the test: a session whose
// installed hook command drops memsync's stdout for one event (the
// capture wrapper runs memsync and throws its answer away) must fail the
// checker with the packet or reminder that event carries.
func TestCheckerSeesDroppedOutput(t *testing.T) {
	tests := []struct {
		host, event string
		steps       int
		run         func(*testing.T, *world, int)
		want        string
	}{
		{"claude-code", "SessionStart", 1, claudeSession, `session packet: 0 times in the conversation at the end of phase "start"`},
		{"claude-code", "Stop", 1, claudeAttendedSession, "journaling reminder: reached the model 0 times"},
		{"codex", "SessionStart", 1, codexSession, `session packet: 0 times in the conversation at the end of phase "start"`},
	}
	for _, tc := range tests {
		t.Run(tc.host+"/"+tc.event, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, tc.host)
			w.label = "pinned"
			defer w.saveArtifacts(tc.host + "-drop-" + tc.event)
			w.dropOutput(tc.event)
			tc.run(t, w, tc.steps)
			dropped := false
			for _, c := range w.hookCalls() {
				dropped = dropped || c.Event == tc.event && c.Dropped
			}
			if !dropped {
				t.Fatalf("the wrapper dropped no %s answer: the host never ran the hook", tc.event)
			}
			problems := checkSession(w.api.requests(), expectFor(agent))
			found := false
			for _, p := range problems {
				found = found || strings.Contains(p, tc.want)
			}
			if !found {
				t.Errorf("with %s's output dropped the checker did not report %q; it reported:\n  %s", tc.event, tc.want, strings.Join(problems, "\n  "))
			}
		})
	}
}
