package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// sessionPlaceholder is the session id the recorded payloads of each host
// carry in place of the real one.
var sessionPlaceholder = map[string]string{
	"claude-code": "9f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f",
	"codex":       "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
}

var (
	uuidPattern     = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	rolloutStamp    = regexp.MustCompile(`rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}`)
	sessionsDateDir = regexp.MustCompile(`sessions/\d{4}/\d{2}/\d{2}/`)
	sessionIDField  = regexp.MustCompile(`"session_id"\s*:\s*"([^"]+)"`)
)

// recordedPayloads picks one payload per event from the hook calls (the
// first of each; for SessionStart the first with source startup) and
// scrubs it: the test's temporary paths become /home/dev/..., dates in
// Codex's rollout path a fixed one, the session id the host's placeholder
// and every other id (prompt, turn) a stable placeholder numbered in
// order of appearance.
func recordedPayloads(host string, calls []hookCall, home, project, repo string) map[string]string {
	chosen := map[string]string{}
	for _, c := range calls {
		if _, ok := chosen[c.Event]; ok {
			continue
		}
		if c.Event == "SessionStart" && !strings.Contains(string(c.Payload), `"source":"startup"`) {
			continue
		}
		chosen[c.Event] = strings.TrimSpace(string(c.Payload))
	}
	events := make([]string, 0, len(chosen))
	for ev := range chosen {
		events = append(events, ev)
	}
	sort.Strings(events)
	ids := map[string]string{}
	for _, ev := range events {
		if m := sessionIDField.FindStringSubmatch(chosen[ev]); m != nil {
			ids[m[1]] = sessionPlaceholder[host]
		}
	}
	paths := strings.NewReplacer(
		strings.ReplaceAll(project, "/", "-"), "-home-dev-billing", // Claude Code's projects/ directory name
		project, "/home/dev/billing",
		repo, "/home/dev/memory",
		home, "/home/dev",
	)
	out := map[string]string{}
	for _, ev := range events {
		p := paths.Replace(chosen[ev])
		p = rolloutStamp.ReplaceAllString(p, "rollout-2026-11-24T09-00-00")
		p = sessionsDateDir.ReplaceAllString(p, "sessions/2026/11/24/")
		p = uuidPattern.ReplaceAllStringFunc(p, func(id string) string {
			if r, ok := ids[id]; ok {
				return r
			}
			r := fmt.Sprintf("00000000-0000-4000-8000-%012d", len(ids))
			ids[id] = r
			return r
		})
		out[ev] = p
	}
	return out
}

// writeHookTestdata replaces testdata/hooks/HOST/*.json with the payloads
// this session's host sent.
func (w *world) writeHookTestdata() {
	w.t.Helper()
	payloads := recordedPayloads(w.host, w.hookCalls(), w.home, w.project, w.repo)
	if len(payloads) == 0 {
		w.t.Fatalf("%s sent no hook payloads to record", w.host)
	}
	dir := filepath.Join(repoRoot(w.t), "testdata", "hooks", w.host)
	old, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			w.t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		w.t.Fatal(err)
	}
	for ev, p := range payloads {
		if err := os.WriteFile(filepath.Join(dir, ev+".json"), []byte(p+"\n"), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
	w.t.Logf("wrote %d %s payloads to %s", len(payloads), w.host, dir)
}
