package main

import (
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	core "github.com/memsync/memsync/memsync"
)

// uiAddrOf waits for the daemon to say where it serves the web view.
func uiAddrOf(t *testing.T, d *daemon) string {
	t.Helper()
	re := regexp.MustCompile(`memsync ui: serving http://([^/\s]+)/`)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(d.stderr.String()); m != nil {
			return m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the daemon never said where the web view is:\n%s", d.stderr)
	return ""
}

// TestDaemonSlowWebClientsDoNotStallProjection is issue 51 §2: with run
// --ui and few file descriptors, many loopback clients that keep their
// connections (a request sent, its answer never read, the connection
// kept) must not keep the daemon from projecting a new record promptly.
func TestDaemonSlowWebClientsDoNotStallProjection(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit not found")
	}
	repo := newRepo(t, "a")
	appendAs(t, repo, "--agent", "a", "--kind", "fact", "a first fact")
	d := startDaemonArgs(t, repo, []string{"MEMSYNC_GRAPH=embedded"}, "--ui", "127.0.0.1:0")
	addr := uiAddrOf(t, d)
	// Few descriptors for the daemon, as a busy host or a low ulimit has.
	if out, err := exec.Command("prlimit", "--pid", strconv.Itoa(d.cmd.Process.Pid), "--nofile=160:160").CombinedOutput(); err != nil {
		t.Skipf("prlimit: %v %s", err, out)
	}
	// The daemon says what each pass projected; a pass after the
	// append that projected a record is the record projected.
	projectedSince := func(from int) bool {
		return regexp.MustCompile(`"msg":"pass","projected":[1-9]`).MatchString(d.stderr.String()[from:])
	}
	for deadline := time.Now().Add(time.Minute); !projectedSince(0); {
		if time.Now().After(deadline) {
			t.Fatalf("the first record was never projected:\n%s", tail(d.stderr.String(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// 300 slow clients: each connects, sends a request (or half of one)
	// and then neither reads nor closes.
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 300; i++ {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			break // the backlog is full: the daemon is holding enough
		}
		conns = append(conns, c)
		if i%2 == 0 {
			fmt.Fprintf(c, "GET /static/ HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		} else {
			fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n", addr) // headers never end
		}
	}
	time.Sleep(500 * time.Millisecond) // let the daemon accept what it will
	from := len(d.stderr.String())
	// Dated two days back: a journal file the daemon has not opened yet.
	rec := journal.Record{TS: time.Now().Add(-48 * time.Hour).UTC(), Agent: "a", Kind: journal.KindFact, Text: "appended while the web view is crowded"}
	_, err := journal.Append(core.Layout{Root: repo}.JournalDir("a"), &rec, journal.AppendOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for !projectedSince(from) {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("a record appended with %d slow web clients connected was not projected within 20s; log tail:\n%s", len(conns), tail(d.stderr.String(), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestStatusShowsTheDaemonsWebView is issue 51 §8: run --ui on a busy
// port runs on without the view, and status says so; on a free port
// status gives the view's address.
func TestStatusShowsTheDaemonsWebView(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		name, addr, want string
	}{
		{"busy port", busy.Addr().String(), "web view: failed: address in use (" + busy.Addr().String() + ")"},
		{"free port", "127.0.0.1:0", "web view: http://127.0.0.1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t, "a")
			d := startDaemonArgs(t, repo, []string{"MEMSYNC_GRAPH=embedded"}, "--ui", tc.addr)
			var out string
			for deadline := time.Now().Add(time.Minute); ; {
				r := cli(t, "status", "--repo", repo)
				if out = r.stdout; strings.Contains(out, tc.want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("status never said %q:\n%s\nlog:\n%s", tc.want, out, d.stderr)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if tc.name == "free port" && !strings.Contains(out, uiAddrOf(t, d)) {
				t.Fatalf("status names another address than the daemon serves on:\n%s", out)
			}
			if _, err := d.stop(t); err != nil {
				t.Fatal(err)
			}
			if r := cli(t, "status", "--repo", repo); strings.Contains(r.stdout, "web view:") {
				t.Fatalf("status after the daemon stopped:\n%s", r.stdout)
			}
		})
	}
}
