package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/memsync/memsync/cache"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/memsync/memsync/memsync"
)

// gnuTime is GNU time, whose -v report has the child's peak RSS; when it is
// missing the peak comes from wait4's rusage.
const gnuTime = "/usr/bin/time"

// measured is how a child process ran.
type measured struct {
	wall    time.Duration
	peakKiB int64 // peak resident set size
	stdout  []byte
	stderr  []byte
	rss     []rssSample // VmRSS every rssEvery while it ran
	marks   []time.Duration
}

// rssSample is the child's VmRSS at a moment of its run.
type rssSample struct {
	at  time.Duration
	kib int64
}

const rssEvery = 100 * time.Millisecond

// runMeasured runs bin with args to completion and measures its wall time
// and peak RSS, sampling its RSS as it goes. mark, if not nil, is called
// with every line the child writes to stderr; when it returns true, the
// moment is kept in marks.
func runMeasured(ctx context.Context, dir string, mark func(line string) bool, bin string, args ...string) (measured, error) {
	var m measured
	timeOut := ""
	name, argv := bin, args
	if _, err := os.Stat(gnuTime); err == nil {
		f, err := os.CreateTemp(dir, "time-*.txt")
		if err != nil {
			return m, err
		}
		f.Close()
		timeOut = f.Name()
		defer os.Remove(timeOut)
		name, argv = gnuTime, append([]string{"-v", "-o", timeOut, bin}, args...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Env = childEnv()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	lines := &lineWriter{fn: func(line string) {
		if mark != nil && mark(line) {
			m.marks = append(m.marks, time.Since(start))
		}
	}}
	cmd.Stdout, cmd.Stderr = &stdout, io.MultiWriter(&tailWriter{buf: &stderr, max: 64 << 10}, lines)
	if err := cmd.Start(); err != nil {
		return m, err
	}
	stopSampling := make(chan struct{})
	sampled := make(chan []rssSample)
	go func() {
		var out []rssSample
		pid := cmd.Process.Pid
		t := time.NewTicker(rssEvery)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				sampled <- out
				return
			case <-t.C:
			}
			if timeOut != "" && pid == cmd.Process.Pid {
				pid = onlyChild(pid) // memsync runs under time
			}
			if kib, err := procStatus(pid, "VmRSS"); err == nil {
				out = append(out, rssSample{at: time.Since(start), kib: kib})
			}
		}
	}()
	err := cmd.Wait()
	m.wall = time.Since(start)
	close(stopSampling)
	m.rss = <-sampled
	m.stdout, m.stderr = stdout.Bytes(), stderr.Bytes()
	if err != nil {
		return m, fmt.Errorf("%s %s: %v: %s", filepath.Base(bin), strings.Join(args[:min(len(args), 1)], " "), err, lastLines(m.stderr, 5))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.peakKiB = ru.Maxrss // KiB on Linux
	}
	if timeOut != "" {
		if kib, err := timeMaxRSS(timeOut); err == nil {
			m.peakKiB = kib
		}
	}
	return m, nil
}

// peakBetween is the highest sampled RSS in [from, to).
func (m measured) peakBetween(from, to time.Duration) int64 {
	var peak int64
	for _, s := range m.rss {
		if s.at >= from && s.at < to && s.kib > peak {
			peak = s.kib
		}
	}
	return peak
}

// onlyChild is pid's child process when it has exactly one, else pid.
func onlyChild(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return pid
	}
	f := strings.Fields(string(b))
	if len(f) != 1 {
		return pid
	}
	c, err := strconv.Atoi(f[0])
	if err != nil {
		return pid
	}
	return c
}

// lineWriter calls fn with every complete line written to it.
type lineWriter struct {
	fn  func(string)
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.fn(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 1<<20 {
		w.buf = w.buf[:0] // a line that long is no progress line
	}
	return len(p), nil
}

// timeMaxRSS reads "Maximum resident set size (kbytes): N" from a GNU time -v report.
func timeMaxRSS(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseTimeMaxRSS(b)
}

func parseTimeMaxRSS(report []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(report))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if ok && k == "Maximum resident set size (kbytes)" {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("no maximum resident set size in the time report")
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	buf *bytes.Buffer
	max int
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	if over := w.buf.Len() - w.max; over > 0 {
		w.buf.Next(over)
	}
	return len(p), nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// procStatus reads a field of /proc/<pid>/status in KiB ("VmRSS", "VmHWM").
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// settleLimit bounds how long the idle daemon may stay busy after
// catching up.
const settleLimit = 10 * time.Minute

// idleResult is one daemon idle run.
type idleResult struct {
	rssKiB, hwmKiB int64
	caughtUp       time.Duration // from start until status showed every record projected
	settled        time.Duration // from start until a second without CPU use
	cpuPercent     float64       // CPU used while idle, in percent of one core
	churnPercent   float64       // CPU used with one shared record per churn interval, in percent of one core
}

// daemonIdleRSS starts `memsync run` (default configuration) on a
// repository of agents agents with perAgent records each, waits until
// `memsync status --json` shows every record projected and then until the
// daemon has settled (a second without CPU use), lets it idle for idle, and
// reads its VmRSS. With churn > 0 it then measures the daemon's CPU for
// idle more while one shared record is appended every churn.
func daemonIdleRSS(ctx context.Context, b *backend, bin string, agents, perAgent int, idle, churn time.Duration, seed int64) (idleResult, error) {
	var res idleResult
	repo, err := os.MkdirTemp(b.tmp, "idle-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(repo)
	// A repository as `memsync init` makes it (config, .gitignore, git),
	// then recent records, as a live fleet has: old days would have the
	// daemon's compaction scheduler fold them first.
	n := agents * perAgent
	gen := newGenerator(seed, agents, false).startingAt(time.Now().Add(-time.Duration(n) * recordSpacing).Add(-time.Minute))
	if out, err := exec.CommandContext(ctx, bin, "init", "--repo", repo).CombinedOutput(); err != nil {
		return res, fmt.Errorf("memsync init: %v: %s", err, out)
	}
	if err := writeJournals(repo, gen, n); err != nil {
		return res, err
	}
	logFile, err := os.Create(filepath.Join(b.tmp, "daemon-"+b.graphFlag+".log"))
	if err != nil {
		return res, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, append([]string{"run", "--repo", repo}, b.cliArgs()...)...)
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		select {
		case <-exited:
			return
		default:
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		select {
		case err := <-exited:
			return res, fmt.Errorf("memsync run exited early: %v (log %s)", err, logFile.Name())
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
		// status may fail while the daemon creates the store: retry until the deadline.
		done, err := caughtUp(ctx, bin, repo, b, agents, n)
		if done {
			break
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("not caught up")
			}
			return res, fmt.Errorf("memsync run did not project %d records within 3 minutes: %w", n, err)
		}
	}
	res.caughtUp = time.Since(start)
	// Caught up is not idle yet: snapshots are regenerated
	// cache.DefaultDelay after the last batch, spaced by their cost. Idle
	// is settleSeconds seconds in a row in which the process used (almost)
	// no CPU, longer than that delay (a one-second check used to pass
	// before the snapshots began, and the RSS was read in their midst);
	// then it idles for idle more.
	settleSeconds := int((cache.DefaultDelay + time.Second) / time.Second)
	pid := cmd.Process.Pid
	// The first snapshot walk of 2,000 agents takes more than two
	// minutes on a loaded host: the bound is for a daemon that never
	// settles, not for a slow one.
	quiet := time.Now().Add(settleLimit)
	for last, still := procCPU(pid), 0; still < settleSeconds; {
		select {
		case err := <-exited:
			return res, fmt.Errorf("memsync run exited: %v", err)
		case <-time.After(time.Second):
		}
		now := procCPU(pid)
		still++
		if now-last > 20*time.Millisecond {
			still = 0
		}
		last = now
		if time.Now().After(quiet) {
			return res, fmt.Errorf("memsync run still busy %s after catching up", settleLimit)
		}
	}
	res.settled = time.Since(start)
	cpu0, t0 := procCPU(pid), time.Now()
	select {
	case err := <-exited:
		return res, fmt.Errorf("memsync run exited: %v", err)
	case <-time.After(idle):
	}
	if d := time.Since(t0); d > 0 {
		res.cpuPercent = 100 * float64(procCPU(pid)-cpu0) / float64(d)
	}
	if res.rssKiB, err = procStatus(cmd.Process.Pid, "VmRSS"); err != nil {
		return res, err
	}
	res.hwmKiB, _ = procStatus(cmd.Process.Pid, "VmHWM")
	if churn > 0 {
		if res.churnPercent, err = churnCPU(ctx, bin, repo, agentNames(1)[0], pid, idle, churn, exited); err != nil {
			return res, err
		}
	}
	return res, nil
}

// churnCPU measures the CPU the daemon pid uses over window while
// `memsync append --scope shared` writes one record every interval, the
// first at once (issue 30: each shared record changes what every agent's
// snapshot shows), as agent. The appends' own processes are not counted.
//
// A first record comes before the window, and the window starts once the
// snapshot of the last agent shows it: the daemon spaces snapshot walks by
// fifteen times the last one's length (cache.Regenerator, at most a minute), so right after the first walk of
// every agent it would put the churn off past the window.
func churnCPU(ctx context.Context, bin, repo, agent string, pid int, window, interval time.Duration, exited <-chan error) (float64, error) {
	appendShared := func(text string) error {
		cmd := exec.CommandContext(ctx, bin, "append", "--repo", repo, "--agent", agent, "--kind", "fact", "--scope", "shared", text)
		cmd.Env = childEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("memsync append: %v: %s", err, out)
		}
		return nil
	}
	layout := memsync.Layout{Root: repo}
	agents, err := layout.Agents()
	if err != nil || len(agents) == 0 {
		return 0, fmt.Errorf("list agents: %v", err)
	}
	last := filepath.Join(layout.CacheDir(slices.Max(agents)), cache.FactsFile)
	const warm = "churn warm-up: the first shared fact"
	if err := appendShared(warm); err != nil {
		return 0, err
	}
	for deadline := time.Now().Add(settleLimit); ; {
		if data, _ := os.ReadFile(last); bytes.Contains(data, []byte(warm)) {
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the warm-up record is not in %s after %s", last, settleLimit)
		}
		select {
		case err := <-exited:
			return 0, fmt.Errorf("memsync run exited: %v", err)
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	cpu0, t0 := procCPU(pid), time.Now()
	for i := 0; ; i++ {
		next := t0.Add(time.Duration(i) * interval)
		if !next.Before(t0.Add(window)) {
			break
		}
		select {
		case err := <-exited:
			return 0, fmt.Errorf("memsync run exited: %v", err)
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Until(next)):
		}
		if err := appendShared(fmt.Sprintf("churn record %d: a shared fact every agent's snapshot shows", i+1)); err != nil {
			return 0, err
		}
	}
	select {
	case err := <-exited:
		return 0, fmt.Errorf("memsync run exited: %v", err)
	case <-time.After(time.Until(t0.Add(window))):
	}
	return 100 * float64(procCPU(pid)-cpu0) / float64(time.Since(t0)), nil
}

// caughtUp asks `memsync status --json` whether the graph holds every
// journal record of every one of the agents (at least want in all: the
// daemon may write records of its own) and nothing waits.
func caughtUp(ctx context.Context, bin, repo string, b *backend, agents, want int) (bool, error) {
	cmd := exec.CommandContext(ctx, bin, append([]string{"status", "--json", "--repo", repo}, b.cliArgs()...)...)
	cmd.Env = childEnv()
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return false, fmt.Errorf("memsync status: %w: %s", err, lastLines(ee.Stderr, 3))
		}
		return false, fmt.Errorf("memsync status: %w", err)
	}
	var rep memsync.StatusReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return false, fmt.Errorf("memsync status --json: %w", err)
	}
	if !rep.Graph.Reachable || len(rep.Agents) != agents {
		return false, nil
	}
	total := 0
	for _, a := range rep.Agents {
		if a.Rejects > 0 {
			return false, fmt.Errorf("memsync status: agent %s has %d rejects", a.Agent, a.Rejects)
		}
		if a.Outbox > 0 || a.Projected != a.JournalRecords {
			return false, nil
		}
		total += a.JournalRecords
	}
	return total >= want, nil
}

// measureIdle measures the idle daemon's RSS.
func (b *bench) measureIdle(ctx context.Context, c *column) error {
	o := b.opts
	name := c.b.name
	b.each(ctx, c, "daemon idle RSS", func(run int) error {
		r, err := daemonIdleRSS(ctx, c.b, b.bin, o.idleAgents, o.idlePerAgent, o.idleWait, o.idleChurn, o.seed+int64(run))
		if err != nil {
			return err
		}
		c.idleMB.add(mb(r.rssKiB))
		c.idleHWM.add(mb(r.hwmKiB))
		c.idleCatchUp.add(r.caughtUp.Seconds())
		c.idleSettled.add(r.settled.Seconds())
		c.idleCPU.add(r.cpuPercent)
		if o.idleChurn > 0 {
			c.idleChurnCPU.add(r.churnPercent)
			b.logf("%s daemon run %d: one shared record every %s: CPU %.2f %% of a core", name, run+1, o.idleChurn, r.churnPercent)
		}
		b.logf("%s daemon idle run %d: VmRSS %s MB (VmHWM %s MB; caught up after %s s, settled after %s s; idle CPU %.2f %% of a core)", name, run+1,
			seconds(mb(r.rssKiB)), seconds(mb(r.hwmKiB)), seconds(r.caughtUp.Seconds()), seconds(r.settled.Seconds()), r.cpuPercent)
		return nil
	}, &c.idleMB, &c.idleChurnCPU)
	return nil
}
