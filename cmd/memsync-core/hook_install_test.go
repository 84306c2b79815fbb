package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzMergeHooks: whatever the settings file holds, merging memsync's
// hooks either refuses it or writes valid JSON holding each memsync
// command once, and merging the result again changes nothing.
func FuzzMergeHooks(f *testing.F) {
	for _, seed := range []string{
		"", "{}", "[]", "null", `{"hooks":{}}`, `{"hooks":null}`, `{"hooks":{"SessionStart":[]}}`,
		`{"model":"x","hooks":{"SessionStart":[{"matcher":"startup","hooks":[{"type":"command","command":"echo hi"}]}]}}`,
		`{"hooks":{"PreCompact":[{"hooks":[{"type":"command","command":"/usr/bin/memsync hook claude-code PreCompact --agent old"}]}]}}`,
		`{"hooks":{"Stop":[{"hooks":"nope"}]}}`, `{"a":1} trailing`, `{"hooks":{"SessionStart":[1,2]}}`,
	} {
		f.Add([]byte(seed))
	}
	cmds := hookCommands("/opt/bin/memsync", "claude-code", []string{"SessionStart", "PreCompact", "SessionEnd"}, "planner", "")
	f.Fuzz(func(t *testing.T, settings []byte) {
		out, err := mergeHooks(settings, "claude-code", cmds)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON out of %q:\n%s", settings, out)
		}
		for ev, cmd := range cmds {
			quoted, _ := json.Marshal(cmd)
			if n := bytes.Count(out, quoted); n != 1 {
				t.Fatalf("%s: %d copies of %s in\n%s", ev, n, quoted, out)
			}
		}
		again, err := mergeHooks(out, "claude-code", cmds)
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("merging twice differs (%v):\n%s\n---\n%s", err, out, again)
		}
	})
}

// TestMergeHooksReplacesOldEntries: an entry installed earlier with other
// flags is replaced, not added to; another host's entries stay.
func TestMergeHooksReplacesOldEntries(t *testing.T) {
	old := `{"hooks":{"SessionStart":[
  {"hooks":[{"type":"command","command":"'/old path/memsync' hook claude-code SessionStart --agent old"}]},
  {"hooks":[{"type":"command","command":"memsync hook codex SessionStart"},{"type":"command","command":"echo keep"}]}]}}`
	out, err := mergeHooks([]byte(old), "claude-code", map[string]string{"SessionStart": "memsync hook claude-code SessionStart --agent new"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Contains(s, "--agent old") || !strings.Contains(s, "--agent new") || !strings.Contains(s, "hook codex SessionStart") || !strings.Contains(s, "echo keep") {
		t.Fatalf("merged:\n%s", s)
	}
}

// TestHookInstallThroughSymlink: a settings file that is a symlink (a
// dotfiles checkout) stays a link; the settings are written to its
// target, the original is backed up beside the link, and installing again
// changes nothing.
func TestHookInstallThroughSymlink(t *testing.T) {
	const foreign = `{"model": "opus", "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "/usr/local/bin/guard"}]}]}}` + "\n"
	for _, tc := range []struct {
		name, host, file string
		link             func(home string) string // makes the target, returns what the link holds
		target           string                   // the file written, under home
		exists           bool                     // the target held foreign before
	}{
		{"claude-code, relative link", "claude-code", ".claude/settings.json", func(home string) string {
			return "../dotfiles/claude/settings.json"
		}, "dotfiles/claude/settings.json", true},
		{"codex, absolute link", "codex", ".codex/hooks.json", func(home string) string {
			return filepath.Join(home, "dotfiles", "codex.json")
		}, "dotfiles/codex.json", true},
		{"claude-code, link to a link", "claude-code", ".claude/settings.json", func(home string) string {
			os.MkdirAll(filepath.Join(home, "dotfiles"), 0o755)
			if err := os.Symlink("real/settings.json", filepath.Join(home, "dotfiles", "settings.json")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(home, "dotfiles", "settings.json")
		}, "dotfiles/real/settings.json", true},
		{"claude-code, dangling link", "claude-code", ".claude/settings.json", func(home string) string {
			return filepath.Join(home, "dotfiles", "new", "settings.json")
		}, "dotfiles/new/settings.json", false},
		{"linked directory, relative link climbing out of it", "claude-code", ".claude/settings.json", func(home string) string {
			// ~/.claude itself is a link into dotfiles/claude-dir; the
			// file's link climbs out of the real directory.
			os.RemoveAll(filepath.Join(home, ".claude"))
			os.MkdirAll(filepath.Join(home, "dotfiles", "claude-dir"), 0o755)
			if err := os.Symlink(filepath.Join(home, "dotfiles", "claude-dir"), filepath.Join(home, ".claude")); err != nil {
				t.Fatal(err)
			}
			return "../shared/settings.json"
		}, "dotfiles/shared/settings.json", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			link := filepath.Join(home, tc.file)
			os.MkdirAll(filepath.Dir(link), 0o755)
			holds := tc.link(home)
			target := filepath.Join(home, tc.target)
			if tc.exists {
				os.MkdirAll(filepath.Dir(target), 0o755)
				if err := os.WriteFile(target, []byte(foreign), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(holds, link); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				r := runHookBinary(t, nil, []string{"HOME=" + home, "CODEX_HOME="}, "hook", "install", tc.host, "--agent", "planner")
				if r.code != 0 {
					t.Fatalf("install %d: exit %d: %s", i+1, r.code, r.stderr)
				}
				if to, err := os.Readlink(link); err != nil || to != holds {
					t.Fatalf("install %d: the link now %q %v, want a link to %q", i+1, to, err, holds)
				}
			}
			got, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(got), " hook "+tc.host+" SessionStart --agent planner"); n != 1 {
				t.Fatalf("the target holds %d SessionStart hooks:\n%s", n, got)
			}
			if tc.exists && (!strings.Contains(string(got), `"/usr/local/bin/guard"`) || !strings.Contains(string(got), `"opus"`)) {
				t.Fatalf("foreign settings lost:\n%s", got)
			}
			if st, err := os.Stat(target); err != nil || tc.exists && st.Mode().Perm() != 0o600 {
				t.Fatalf("target mode %v %v, want 0600 kept", st.Mode(), err)
			}
			backups, _ := filepath.Glob(link + ".memsync-backup-*")
			if !tc.exists {
				if len(backups) != 0 {
					t.Fatalf("backups %v of a file that did not exist", backups)
				}
				return
			}
			if len(backups) != 1 {
				t.Fatalf("backups %v, want one beside the link", backups)
			}
			if b, _ := os.ReadFile(backups[0]); string(b) != foreign {
				t.Fatalf("the backup holds %q, not the original", b)
			}
		})
	}
}

// TestHookTimeoutsWithinHostLimits: every hook is written with a timeout
// the host honours as written (Codex clamps SessionEnd to 3 s and warns
// at each start about a longer one).
func TestHookTimeoutsWithinHostLimits(t *testing.T) {
	events := []string{"SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"}
	for _, host := range []string{"claude-code", "codex"} {
		out, err := mergeHooks(nil, host, hookCommands("/opt/bin/memsync", host, events, "planner", ""))
		if err != nil {
			t.Fatal(err)
		}
		var settings struct {
			Hooks map[string][]struct {
				Hooks []struct {
					Timeout int `json:"timeout"`
				} `json:"hooks"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal(out, &settings); err != nil {
			t.Fatal(err)
		}
		for ev, groups := range settings.Hooks {
			for _, g := range groups {
				for _, h := range g.Hooks {
					limit := 5
					if ev == "SessionEnd" {
						limit = 3
					}
					if h.Timeout < 1 || h.Timeout > limit {
						t.Errorf("%s %s: timeout %d, want 1..%d", host, ev, h.Timeout, limit)
					}
				}
			}
		}
		if len(settings.Hooks["SessionEnd"]) == 0 {
			t.Errorf("%s: no SessionEnd hook written:\n%s", host, out)
		}
	}
}
