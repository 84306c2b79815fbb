package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/cmd/internal/cmdline"
)

// updateReference rewrites docs/reference/ from the commands' own help:
//
//	go test -count=1 -run TestReferenceIsCurrent ./cmd/memsync-core -update-reference
var updateReference = flag.Bool("update-reference", false, "rewrite docs/reference/ from the commands' help")

// referenceDir is docs/reference/ of the repository this package is in.
const referenceDir = "../../docs/reference"

// referenceSubcommands are the commands whose help has a second level
// worth its own section on the command's page.
var referenceSubcommands = map[string][][]string{
	"hook": {{"hook", "install", "--help"}},
}

// referenceHelp is what `memsync ARGS` prints, run in-process with an
// empty environment, so that no default depends on who generates it.
func referenceHelp(t *testing.T, args ...string) string {
	t.Helper()
	r := invocation{cwd: "/nonexistent-cwd"}.run(t, args...)
	if r.code != exitOK {
		t.Fatalf("memsync %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout + r.stderr
}

// referencePages is every file of docs/reference/ with the content the
// commands' help gives it today.
func referencePages(t *testing.T) map[string]string {
	t.Helper()
	pages := map[string]string{}
	const generated = "<!-- Generated from the commands' help by cmd/memsync-core/reference_test.go; do not edit.\n" +
		"     Regenerate: go test -count=1 -run TestReferenceIsCurrent ./cmd/memsync-core -update-reference -->\n\n"
	var index strings.Builder
	index.WriteString(generated)
	index.WriteString("# Command reference\n\n")
	index.WriteString("One page per command, each the command's own `--help`. Every command takes\n")
	index.WriteString("`--repo DIR` (default `$MEMSYNC_REPO`, else the current directory).\n")
	index.WriteString("For the tasks these commands serve, see the [guide](../guide/README.md).\n\n")
	index.WriteString("```\n" + referenceHelp(t, "help") + "```\n\n")
	index.WriteString("| Command | What it does |\n|---|---|\n")
	for _, c := range cmdline.Commands() {
		fmt.Fprintf(&index, "| [`%s`](%s.md) | %s |\n", c.Name, c.Name, strings.ReplaceAll(c.Summary, "|", `\|`))
		var page strings.Builder
		page.WriteString(generated)
		fmt.Fprintf(&page, "# memsync %s\n\n%s.\n\n", c.Name, c.Summary)
		page.WriteString("```\n" + referenceHelp(t, c.Name, "--help") + "```\n")
		for _, sub := range referenceSubcommands[c.Name] {
			name := strings.Join(sub[:len(sub)-1], " ")
			fmt.Fprintf(&page, "\n## memsync %s\n\n```\n%s```\n", name, referenceHelp(t, sub...))
		}
		page.WriteString("\n[All commands](README.md)\n")
		pages[c.Name+".md"] = page.String()
	}
	pages["README.md"] = index.String()
	return pages
}

// TestReferenceIsCurrent fails when a page of docs/reference/ is not what
// the commands' help prints today, or a page is there for no command.
func TestReferenceIsCurrent(t *testing.T) {
	pages := referencePages(t)
	if *updateReference {
		if err := os.MkdirAll(referenceDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range pages {
			if err := os.WriteFile(filepath.Join(referenceDir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries, err := os.ReadDir(referenceDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := pages[e.Name()]; !ok {
			t.Errorf("docs/reference/%s is for no command (remove it)", e.Name())
		}
	}
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join(referenceDir, name))
		if err != nil {
			t.Errorf("docs/reference/%s: %v (run with -update-reference)", name, err)
			continue
		}
		if !bytes.Equal(got, []byte(want)) {
			t.Errorf("docs/reference/%s is stale: run go test -count=1 -run TestReferenceIsCurrent ./cmd/memsync-core -update-reference", name)
		}
	}
}
