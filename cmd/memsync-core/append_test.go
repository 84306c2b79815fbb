package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

var now = time.Date(2026, 11, 21, 9, 15, 0, 250_000_000, time.UTC)

// journalLines reads and parses every line of agent's journal for day.
func journalLines(t *testing.T, repo, agent, day string) []journal.Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "agents", agent, "memory", "journal", day+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []journal.Record
	for i, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		if !strings.HasSuffix(line, "\n") {
			t.Fatalf("line %d has no newline", i+1)
		}
		r, err := journal.Parse([]byte(strings.TrimSuffix(line, "\n")))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		out = append(out, r)
	}
	return out
}

// initRepo is a repository made by memsync init (in-process) for agents.
func initRepo(t *testing.T, agents ...string) string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"init", "--repo", dir}
	for _, a := range agents {
		args = append(args, "--agent", a)
	}
	if r := cli(t, args...); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	pinHost(t, dir)
	return dir
}

// testHost is the host id the tests pin (journal.HostFile), so that the
// uuids append writes are known: mem_<second>_<agent>_testhost-<NNNN>.
const testHost = "testhost"

func pinHost(t *testing.T, repo string) {
	t.Helper()
	path := filepath.Join(repo, filepath.FromSlash(journal.HostFile))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(testHost+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAppendAllFlags(t *testing.T) {
	repo := initRepo(t, "alice")
	iv := invocation{now: now, env: map[string]string{"MEMSYNC_REPO": repo}}
	r := iv.run(t, "append", "--agent", "alice", "--kind", "decision", "--scope", "shared",
		"--entity", "@Shaun", "--entity", "Acme Corp", "--tag", "db", "--tag", "infra",
		"--link", "mem_20261120T080000Z_alice_0003", "--supersedes", "mem_20261101T000000Z_alice_0001",
		"--conflicts-with", "mem_20261115T120000Z_bob_0002", "--conflicts-with", "mem_20261115T120000Z_bob_0003",
		"--source-type", "told", "--source-actor", "@Shaun", "--source-context", "standup",
		"--confidence", "high", "--max-age", "90d", "--tier", "core", "--session", "s-1", "--task", "t-7",
		"--why", "cheaper", "--ref-git", "4f2a9c1", "--ref-path", "docs/db.md",
		"Chose #postgres over @Mira's idea")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("append: %d %q", r.code, r.stderr)
	}
	uuid := randomized(t, strings.TrimSuffix(r.stdout, "\n"), "mem_20261121T091500Z_alice_testhost-0001")
	recs := journalLines(t, repo, "alice", "2026-11-21")
	want := `{"uuid":"` + uuid + `","ts":"2026-11-21T09:15:00.25Z","agent":"alice","kind":"decision","scope":"shared",` +
		`"text":"Chose #postgres over @Mira's idea","refs":[{"git":"4f2a9c1","path":"docs/db.md"}],"entities":["@Shaun","Acme Corp"],` +
		`"tags":["db","infra"],"links":["mem_20261120T080000Z_alice_0003"],"supersedes":["mem_20261101T000000Z_alice_0001"],` +
		`"conflicts_with":["mem_20261115T120000Z_bob_0002","mem_20261115T120000Z_bob_0003"],` +
		`"source":{"type":"told","actor":"@Shaun","context":"standup"},"confidence":"high","max_age":"90d","tier":"core",` +
		`"session":"s-1","task":"t-7","why":"cheaper"}`
	if len(recs) != 1 || string(recs[0].Canonical()) != want {
		t.Fatalf("journal:\n%s\nwant\n%s", recs[0].Canonical(), want)
	}
}

func TestAppendOutputsAndSequence(t *testing.T) {
	repo := initRepo(t, "alice")
	iv := invocation{now: now}
	r := iv.run(t, "append", "--repo", repo, "--agent", "alice", "--kind", "fact", "--json", "first")
	if r.code != exitOK {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	var doc struct{ UUID, Path string }
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.UUID == "" {
		t.Fatalf("--json is not one JSON document: %v", err)
	}
	uuid := randomized(t, doc.UUID, "mem_20261121T091500Z_alice_testhost-0001")
	if r.stdout != `{"uuid":"`+uuid+`","path":"agents/alice/memory/journal/2026-11-21.jsonl"}`+"\n" {
		t.Fatalf("--json: %q", r.stdout)
	}
	// Same second: the sequence goes on; text before the flags is fine.
	r = iv.run(t, "append", "second", "--repo", repo, "--agent", "alice", "--kind", "fact")
	randomized(t, strings.TrimSuffix(r.stdout, "\n"), "mem_20261121T091500Z_alice_testhost-0002")
	// "--" lets the text start with a dash.
	r = iv.run(t, "append", "--repo", repo, "--agent", "alice", "--kind", "fact", "--", "-5 degrees outside")
	if r.code != exitOK {
		t.Fatalf("--: %d %q", r.code, r.stderr)
	}
	// An explicit --ts with an offset lands on its UTC day and second.
	r = iv.run(t, "append", "--repo", repo, "--agent", "alice", "--kind", "fact", "--ts", "2026-11-21T22:00:01-05:00", "late")
	randomized(t, strings.TrimSuffix(r.stdout, "\n"), "mem_20261122T030001Z_alice_testhost-0001")
	if got := journalLines(t, repo, "alice", "2026-11-22"); len(got) != 1 || got[0].Text != "late" {
		t.Fatalf("--ts journal: %+v", got)
	}
	if got := journalLines(t, repo, "alice", "2026-11-21"); len(got) != 3 || got[2].Text != "-5 degrees outside" {
		t.Fatalf("journal: %+v", got)
	}
}

func TestAppendStdin(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"from stdin\n", "from stdin"},
		{"two newlines\n\n", "two newlines\n"},
		{"crlf\r\n", "crlf"},
		{"no newline", "no newline"},
		{"multi\nline\n", "multi\nline"},
	} {
		repo := initRepo(t, "a")
		r := invocation{now: now, stdin: tc.in}.run(t, "append", "--repo", repo, "--agent", "a", "--kind", "fact", "-")
		if r.code != exitOK {
			t.Fatalf("%q: %d %s", tc.in, r.code, r.stderr)
		}
		if got := journalLines(t, repo, "a", "2026-11-21"); got[0].Text != tc.want {
			t.Errorf("stdin %q stored as %q, want %q", tc.in, got[0].Text, tc.want)
		}
	}
	repo := initRepo(t, "a")
	big := strings.Repeat("x", journal.MaxLineBytes+10)
	r := invocation{now: now, stdin: big}.run(t, "append", "--repo", repo, "--agent", "a", "--kind", "fact", "-")
	if r.code != exitUsage || !strings.Contains(r.stderr, "1 MiB") {
		t.Fatalf("huge stdin: %d %q", r.code, r.stderr)
	}
}

func TestAppendConfigFsync(t *testing.T) {
	repo := initRepo(t, "a")
	os.WriteFile(filepath.Join(repo, "memsync.yaml"), []byte("append:\n  fsync: false\n"), 0o644)
	if r := (invocation{now: now}).run(t, "append", "--repo", repo, "--agent", "a", "--kind", "fact", "x"); r.code != exitOK {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	os.WriteFile(filepath.Join(repo, "memsync.yaml"), []byte("apend:\n  fsync: false\n"), 0o644)
	r := (invocation{now: now}).run(t, "append", "--repo", repo, "--agent", "a", "--kind", "fact", "x")
	if r.code != exitOK || !strings.Contains(r.stderr, `unknown key "apend"`) || !strings.Contains(r.stderr, "memsync.yaml") ||
		!strings.HasPrefix(r.stderr, "memsync append: warning: ") {
		t.Fatalf("bad config: %d %q", r.code, r.stderr)
	}
}

// TestAppendWithBrokenConfig: a memsync.yaml that does not parse (or does
// not validate) never stops an agent from journaling: the real binary
// writes the record with the defaults and warns, naming the file and line.
func TestAppendWithBrokenConfig(t *testing.T) {
	bin := binary(t)
	for _, tc := range []struct{ name, yaml, want string }{
		{"syntax", "daemon:\n  batch_size: [\n", "memsync.yaml"},
		{"typo", "deamon:\n  batch_size: 10\n", `line 1: unknown key "deamon"`},
		{"invalid", "graph: postgres\n", "graph"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := initRepo(t, "a")
			os.WriteFile(filepath.Join(repo, "memsync.yaml"), []byte(tc.yaml), 0o644)
			cmd := exec.Command(bin, "append", "--repo", repo, "--agent", "a", "--kind", "fact", "--ts", now.Format(time.RFC3339Nano), "still journaling")
			cmd.Env = append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH=")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil || !strings.Contains(stderr.String(), "warning") || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("append with a broken memsync.yaml: %v, stderr %q", err, stderr.String())
			}
			recs := journalLines(t, repo, "a", now.Format("2006-01-02"))
			if len(recs) != 1 || recs[0].Text != "still journaling" || strings.TrimSpace(stdout.String()) != recs[0].UUID {
				t.Fatalf("journal %+v, stdout %q", recs, stdout.String())
			}
		})
	}
}

func TestAppendErrors(t *testing.T) {
	base := []string{"append", "--agent", "alice", "--kind", "fact"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no agent", []string{"append", "--kind", "fact", "x"}, exitUsage, "memsync append: --agent: required"},
		{"bad agent", []string{"append", "--agent", "../bob", "--kind", "fact", "x"}, exitUsage, `memsync append: --agent: invalid agent name "../bob"`},
		{"no kind", []string{"append", "--agent", "alice", "x"}, exitUsage, "memsync append: --kind: required"},
		{"bogus kind", []string{"append", "--agent", "alice", "--kind", "bogus", "x"}, exitUsage, `memsync append: --kind: unknown kind "bogus" (one of decision, preference,`},
		{"feedback kind", []string{"append", "--agent", "alice", "--kind", "feedback", "x"}, exitUsage, `memsync append: --kind: feedback records are written by memsync itself (memsync flag), not appended`},
		{"compaction kind", []string{"append", "--agent", "alice", "--kind", "compaction", "x"}, exitUsage, `memsync append: --kind: compaction records are written by memsync itself (memsync compact)`},
		{"promotion kind", []string{"append", "--agent", "alice", "--kind", "promotion", "x"}, exitUsage, `memsync append: --kind: promotion records are written by memsync itself`},
		{"bad scope", append(base, "--scope", "public", "x"), exitUsage, `memsync append: --scope: unknown scope "public"`},
		{"bad confidence", append(base, "--confidence", "sure", "x"), exitUsage, `memsync append: --confidence: "sure" is not one of`},
		{"bad max-age", append(base, "--max-age", "1y", "x"), exitUsage, `memsync append: --max-age: "1y"`},
		{"bad tier", append(base, "--tier", "gold", "x"), exitUsage, `memsync append: --tier: "gold"`},
		{"bad source type", append(base, "--source-type", "dreamt", "x"), exitUsage, `memsync append: --source-type: unknown type "dreamt"`},
		{"bad link", append(base, "--link", "not a uuid", "x"), exitUsage, `memsync append: --link: "not a uuid" is not a valid uuid`},
		{"bad supersedes", append(base, "--supersedes", "", "x"), exitUsage, `memsync append: --supersedes:`},
		{"bad conflicts", append(base, "--conflicts-with", "a b", "x"), exitUsage, `memsync append: --conflicts-with:`},
		{"blank entity", append(base, "--entity", " ", "x"), exitUsage, `memsync append: --entity: blank entity`},
		{"bad ts", append(base, "--ts", "yesterday", "x"), exitUsage, `memsync append: --ts: "yesterday" is not an RFC 3339 time`},
		{"ts year 10000", append(base, "--ts", "9999-12-31T23:00:00-05:00", "x"), exitUsage, `memsync append: --ts:`},
		{"no text", base, exitUsage, "memsync append: TEXT: required"},
		{"blank text", append(base, "  "), exitUsage, "memsync append: TEXT: required and must not be blank"},
		{"two texts", append(base, "a", "b"), exitUsage, "one TEXT argument expected, got 2"},
		{"huge text", append(base, strings.Repeat("x", journal.MaxLineBytes)), exitUsage, "memsync append: TEXT: record is"},
		{"unknown flag", append(base, "--colour", "x"), exitUsage, "memsync append: unknown flag --colour"},
		{"flag without value", append(base, "x", "--tag"), exitUsage, "--tag needs a value"},
		{"bad bool", append(base, "--json=maybe", "x"), exitUsage, "-json"},
		{"missing repo", []string{"append", "--repo", "/nonexistent/memsync-repo", "--agent", "a", "--kind", "fact", "x"}, exitUsage, "memsync append: repository /nonexistent/memsync-repo does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := initRepo(t, "alice")
			r := invocation{now: now, env: map[string]string{"MEMSYNC_REPO": repo}}.run(t, tc.args...)
			if r.code != tc.code || r.stdout != "" {
				t.Fatalf("exit %d stdout %q, want %d", r.code, r.stdout, tc.code)
			}
			if !strings.HasPrefix(r.stderr, tc.want) && !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("stderr %q, want one line with %q", r.stderr, tc.want)
			}
			if files, _ := filepath.Glob(filepath.Join(repo, "agents", "*", "memory", "journal", "*.jsonl")); len(files) > 0 {
				t.Fatalf("a refused append wrote %v", files)
			}
		})
	}
}

func TestAppendNeverEchoesEnv(t *testing.T) {
	repo := initRepo(t, "a")
	const secret = "pw-do-not-print"
	env := map[string]string{"MEMSYNC_NEO4J_PASSWORD": secret, "MEMSYNC_REPO": repo}
	for _, args := range [][]string{
		{"append", "--agent", "a", "--kind", "fact", "x"},
		{"append", "--agent", "a", "--kind", "bogus", "x"},
		{"append", "--help"},
	} {
		r := invocation{now: now, env: env}.run(t, args...)
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Fatalf("%q printed the password", args)
		}
	}
}

// buildBinary compiles the two binaries once per test binary run into one
// directory, as they are installed: memsync-core (this package, every
// command) and memsync (cmd/memsync, which runs append itself and
// execs memsync-core for the rest). It returns the front's path.
var buildBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "memsync-bin-")
	if err != nil {
		return "", err
	}
	for _, b := range []struct{ name, pkg string }{{"memsync-core", "."}, {"memsync", "../memsync"}} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b.name), b.pkg).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return filepath.Join(dir, "memsync"), nil
})

func binary(tb testing.TB) string {
	tb.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		tb.Skip("no go toolchain to build the binary")
	}
	bin, err := buildBinary()
	if err != nil {
		tb.Fatal(err)
	}
	return bin
}

// TestAppendManyProcesses is SPEC §6 "several agents appending at once never
// interleave or tear lines", with real processes: 16 concurrent workers each
// run memsync append 500 times into one agent's journal. Every line must
// parse and every uuid be distinct. MEMSYNC_TEST_APPEND_NOFSYNC=1 adds
// --no-fsync (for comparing timings).
func TestAppendManyProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("8,000 process executions")
	}
	bin := binary(t)
	repo := initRepo(t, "fleet")
	const workers, each = 16, 500
	extra := []string{}
	if os.Getenv("MEMSYNC_TEST_APPEND_NOFSYNC") == "1" {
		extra = append(extra, "--no-fsync")
	}
	durations := make([][]time.Duration, workers)
	errs := make(chan error, workers)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				args := append([]string{"append", "--repo", repo, "--agent", "fleet", "--kind", "observation",
					"--tag", fmt.Sprintf("w%d", w)}, extra...)
				args = append(args, fmt.Sprintf("worker %d record %d: %s", w, i, strings.Repeat("·", i%50)))
				cmd := exec.Command(bin, args...)
				cmd.Env = append(os.Environ(), "MEMSYNC_REPO=")
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				t0 := time.Now()
				out, err := cmd.Output()
				durations[w] = append(durations[w], time.Since(t0))
				if err != nil || !strings.HasPrefix(string(out), "mem_") {
					errs <- fmt.Errorf("worker %d call %d: %v %q %q", w, i, err, out, stderr.String())
					return
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	files, _ := filepath.Glob(filepath.Join(repo, "agents", "fleet", "memory", "journal", "*.jsonl"))
	lines, ids := 0, map[string]bool{}
	perWorker := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			t.Fatalf("%s ends in a torn line", f)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, journal.MaxLineBytes+2)
		for sc.Scan() {
			lines++
			r, err := journal.Parse(sc.Bytes())
			if err != nil {
				t.Fatalf("%s:%d: %v: %q", f, lines, err, sc.Text())
			}
			if ids[r.UUID] {
				t.Fatalf("uuid %s appears twice", r.UUID)
			}
			ids[r.UUID] = true
			perWorker[r.Tags[0]]++
		}
	}
	if lines != workers*each || len(ids) != workers*each {
		t.Fatalf("%d lines, %d distinct uuids, want %d", lines, len(ids), workers*each)
	}
	for w := 0; w < workers; w++ {
		if n := perWorker[fmt.Sprintf("w%d", w)]; n != each {
			t.Fatalf("worker %d has %d lines, want %d", w, n, each)
		}
	}
	var all []time.Duration
	for _, d := range durations {
		all = append(all, d...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	t.Logf("%d appends by %d concurrent workers (fsync=%v) in %v: %.0f/s; per call p50 %v p90 %v p99 %v max %v",
		len(all), workers, len(extra) == 0, wall.Round(time.Millisecond), float64(len(all))/wall.Seconds(),
		all[len(all)/2].Round(10*time.Microsecond), all[len(all)*9/10].Round(10*time.Microsecond),
		all[len(all)*99/100].Round(10*time.Microsecond), all[len(all)-1].Round(10*time.Microsecond))
}

// BenchmarkAppendExec measures one memsync append process, sequentially,
// with and without fsync: go test -run='^$' -bench=AppendExec ./cmd/memsync-core/
func BenchmarkAppendExec(b *testing.B) {
	bin := binary(b)
	for _, mode := range []struct {
		name  string
		extra []string
	}{{"fsync", nil}, {"nofsync", []string{"--no-fsync"}}} {
		b.Run(mode.name, func(b *testing.B) {
			repo := b.TempDir()
			os.MkdirAll(journalDir(repo, "bench"), 0o755) // what init makes for agent bench
			var ds []time.Duration
			for i := 0; i < b.N; i++ {
				args := append([]string{"append", "--repo", repo, "--agent", "bench", "--kind", "fact"}, mode.extra...)
				t0 := time.Now()
				if out, err := exec.Command(bin, append(args, "benchmark record")...).CombinedOutput(); err != nil {
					b.Fatalf("%v %s", err, out)
				}
				ds = append(ds, time.Since(t0))
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
		})
	}
}

// BenchmarkAppendInProcess is the cost of an append without process start-up.
func BenchmarkAppendInProcess(b *testing.B) {
	for _, mode := range []struct {
		name  string
		extra []string
	}{{"fsync", nil}, {"nofsync", []string{"--no-fsync"}}} {
		b.Run(mode.name, func(b *testing.B) {
			repo := b.TempDir()
			os.MkdirAll(journalDir(repo, "bench"), 0o755) // what init makes for agent bench
			env := &Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }, Now: time.Now}
			args := append([]string{"append", "--repo", repo, "--agent", "bench", "--kind", "fact"}, mode.extra...)
			args = append(args, "benchmark record")
			for i := 0; i < b.N; i++ {
				if code := Main(b.Context(), env, args); code != 0 {
					b.Fatalf("exit %d: %s", code, env.Stderr)
				}
			}
		})
	}
}

// TestAppendUnknownAgent: append refuses an agent init never created (a
// mistyped --agent), and names the agents there are and both ways to add
// one; --new-agent and append.create_agents: true allow it.
func TestAppendUnknownAgent(t *testing.T) {
	repo := initRepo(t, "planner", "critic")
	iv := invocation{now: now, env: map[string]string{"MEMSYNC_REPO": repo}}
	r := iv.run(t, "append", "--agent", "plannr", "--kind", "fact", "x")
	want := `memsync append: --agent: unknown agent "plannr" in ` + repo + `; did you mean planner? (agents: critic, planner); ` +
		`to create it here, pass --new-agent`
	if r.code != exitUsage || r.stdout != "" || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("unknown agent: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	r = iv.run(t, "append", "--agent", "zed", "--kind", "fact", "x")
	want = `memsync append: --agent: unknown agent "zed" in ` + repo + ` (agents: critic, planner): ` +
		`create it with "memsync init --repo ` + repo + ` --agent zed"; to create it here, pass --new-agent`
	if r.code != exitUsage || r.stdout != "" || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("unknown agent: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(repo, "agents", "plannr")); !os.IsNotExist(err) {
		t.Fatal("a refused append created the agent")
	}
	if r := iv.run(t, "append", "--agent", "planner", "--kind", "fact", "x"); r.code != exitOK {
		t.Fatalf("known agent: %d %q", r.code, r.stderr)
	}
	if r := iv.run(t, "append", "--agent", "newbie", "--new-agent", "--kind", "fact", "x"); r.code != exitOK {
		t.Fatalf("--new-agent: %d %q", r.code, r.stderr)
	}
	if got := journalLines(t, repo, "newbie", "2026-11-21"); len(got) != 1 {
		t.Fatalf("--new-agent journal: %+v", got)
	}
	os.WriteFile(configFile(repo), []byte("append:\n  create_agents: true\n"), 0o644)
	if r := iv.run(t, "append", "--agent", "other", "--kind", "fact", "x"); r.code != exitOK {
		t.Fatalf("append.create_agents: %d %q", r.code, r.stderr)
	}
}

// randomized checks that uuid is want, "-" and the random part memsync
// append adds (journal.AppendOptions.Random), and returns it.
func randomized(t *testing.T, uuid, want string) string {
	t.Helper()
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(want) + `-[a-z2-7]{8}$`).MatchString(uuid) {
		t.Fatalf("uuid %q, want %s-<random part>", uuid, want)
	}
	return uuid
}
