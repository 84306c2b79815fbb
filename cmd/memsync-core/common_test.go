package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestListAgents(t *testing.T) {
	repo := t.TempDir()
	for _, d := range []string{"alice", "bob_2", "-bad", "has space", ".hidden"} {
		if err := os.MkdirAll(filepath.Join(repo, "agents", d, "memory"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "agents", "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := listAgents(repo)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"alice", "bob_2"}) {
		t.Errorf("agents %q", got)
	}
	if got, err := listAgents(t.TempDir()); err != nil || got != nil {
		t.Errorf("no agents/: %q %v", got, err)
	}
	if p := journalDir("/r", "a"); p != filepath.FromSlash("/r/agents/a/memory/journal") {
		t.Errorf("journalDir %s", p)
	}
	if p := relPath("/r", journalDir("/r", "a")); p != "agents/a/memory/journal" {
		t.Errorf("relPath %s", p)
	}
}

// TestPlural: counts read as English ("1 memory", "2 memories").
func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n          int
		noun, want string
	}{
		{1, "memory", "1 memory"}, {2, "memory", "2 memories"}, {0, "memory", "0 memories"},
		{1, "record", "1 record"}, {3, "record", "3 records"}, {2, "day", "2 days"},
	} {
		if got := plural(tc.n, tc.noun); got != tc.want {
			t.Errorf("plural(%d, %q) = %q, want %q", tc.n, tc.noun, got, tc.want)
		}
	}
}
