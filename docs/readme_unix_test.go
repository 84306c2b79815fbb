//go:build unix

package docs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeSection is the README's section whose ```sh blocks
// TestReadmeRunsAsWritten runs.
const readmeSection = "## Using it"

// readmeScript is the ```sh blocks of section in the README text, as one
// bash script, with what a test cannot run left out or stood in for:
// installing the binaries (the test built them), the interactive hosts
// (claude, codex), and a `sleep` that waits for the daemon's pass, which
// becomes a wait until verify agrees (at most 30 s), so the script does not
// race the daemon. Lines ending in & (the daemon) run in the background and
// are stopped when the script ends.
func readmeScript(t *testing.T, readme, section string) string {
	t.Helper()
	start := strings.Index(readme, "\n"+section+"\n")
	if start < 0 {
		t.Fatalf("README.md has no %q section", section)
	}
	body := sectionBody(readme[start+len(section)+2:])
	var script strings.Builder
	script.WriteString("set -e\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n")
	blocks := 0
	in := false
	for _, line := range strings.Split(body, "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```sh":
			in = true
			blocks++
			continue
		case in && strings.TrimSpace(line) == "```":
			in = false
			continue
		case !in:
			continue
		}
		cmd := strings.TrimSpace(line)
		fields := strings.Fields(cmd)
		if len(fields) == 0 {
			continue
		}
		switch {
		case fields[0] == "go" && len(fields) > 1 && fields[1] == "install":
			script.WriteString("# (built by the test) " + cmd + "\n")
		case fields[0] == "claude" || fields[0] == "codex":
			script.WriteString("# (an interactive host) " + cmd + "\n")
		case fields[0] == "sleep":
			script.WriteString("for i in $(seq 300); do memsync verify >/dev/null 2>&1 && break; sleep 0.1; done # " + cmd + "\n")
		default:
			script.WriteString(line + "\n")
		}
	}
	if blocks == 0 {
		t.Fatalf("README.md's %q section has no ```sh block", section)
	}
	return script.String()
}

// TestReadmeRunsAsWritten runs the ```sh blocks of the README's "Using it"
// section top to bottom with freshly built binaries, in a temporary HOME
// (so ~/memory is new), and fails when a command exits non-zero.
func TestReadmeRunsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds both binaries")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	script := readmeScript(t, string(readme), readmeSection)
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "./cmd/memsync", "./cmd/memsync-core")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	home := t.TempDir()
	gitconfig := filepath.Join(home, ".gitconfig")
	if err := os.WriteFile(gitconfig, []byte("[user]\n\tname = README test\n\temail = readme@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	// Its own process group, so that a timeout also stops a daemon the
	// script left in the background (which holds the output pipe open).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Dir = home
	cmd.Env = []string{
		"HOME=" + home,
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"GIT_CONFIG_GLOBAL=" + gitconfig,
		"TMPDIR=" + os.TempDir(),
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("README.md's %q blocks failed: %v\nscript:\n%s\noutput:\n%s", readmeSection, err, script, out)
	}
	// What the README says the commands print is what they printed, but
	// for what differs from run to run (uuids, times, paths, alignment).
	got := normalizeOutput(string(out))
	for _, block := range readmeOutputs(string(readme), readmeSection) {
		if want := normalizeOutput(block); !strings.Contains(got, want) {
			t.Errorf("README.md's %q shows output the commands did not print:\n%s\noutput:\n%s", readmeSection, block, out)
		}
	}
}

// sectionBody is text up to its first heading (of any level) outside a
// fenced block: a section's own text, so that a subsection's blocks (a
// service, a Neo4j server) are not run, while a "# ..." line a command
// prints inside a block does not end it.
func sectionBody(text string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
		}
		if !in && strings.HasPrefix(line, "#") {
			break
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// readmeOutputs is the ```text blocks of section: what the README claims
// its commands print.
func readmeOutputs(readme, section string) []string {
	start := strings.Index(readme, "\n"+section+"\n")
	if start < 0 {
		return nil
	}
	body := sectionBody(readme[start+len(section)+2:])
	var blocks []string
	var cur []string
	in := false
	for _, line := range strings.Split(body, "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```text":
			in, cur = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}

var (
	outputUUID  = regexp.MustCompile(`mem_[0-9]{8}T[0-9]{6}Z_[A-Za-z0-9_-]+`)
	outputTime  = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z`)
	outputDay   = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}\.jsonl`)
	outputGraph = regexp.MustCompile(`\(embedded:[^)]*\)`)
	outputSpace = regexp.MustCompile(`[ \t]+`)
)

// normalizeOutput stands a placeholder in for what differs between runs
// and collapses runs of blanks, line by line, dropping blank lines.
func normalizeOutput(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		l = outputUUID.ReplaceAllString(l, "UUID")
		l = outputTime.ReplaceAllString(l, "TIME")
		l = outputDay.ReplaceAllString(l, "DAY.jsonl")
		l = outputGraph.ReplaceAllString(l, "(embedded:GRAPH)")
		l = strings.TrimSpace(outputSpace.ReplaceAllString(l, " "))
		if l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
