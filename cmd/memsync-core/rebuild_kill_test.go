package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the test reads the store as a second process would

	core "github.com/memsync/memsync/memsync"
)

// TestKilledRebuildLosesNothing: `memsync rebuild` killed with SIGKILL in
// the middle of its bulk load (no fsync per commit, cursors held in
// memory) leaves the store marked as an interrupted load and every agent's
// cursors where the rebuild reset them, at the start of every journal;
// the next `memsync sync` projects every journal again and `memsync
// verify` finds every record once.
func TestKilledRebuildLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and rebuilds 60,000 records")
	}
	repo := ledgerRepo(t)
	const perAgent = 30_000
	for _, agent := range []string{"a", "b"} {
		var b bytes.Buffer
		for i := range perAgent {
			ts := t0.Add(time.Duration(i) * time.Second).UTC().Format(time.RFC3339Nano)
			fmt.Fprintf(&b, `{"uuid":"mem_%s_%05d","ts":%q,"agent":%q,"kind":"fact","text":"note %d of %s about the build"}`+"\n", agent, i, ts, agent, i, agent)
		}
		if err := os.WriteFile(filepath.Join(journalDir(repo, agent), "2026-11-18.jsonl"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, "sync", "--once", "--repo", repo)

	db, err := sql.Open("sqlite", "file:"+filepath.Join(localDir(repo), "graph.db")+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM memories`).Scan(&n); err != nil {
			return -1 // between the drop and the first batch, or locked: ask again
		}
		return n
	}
	marker := func() bool {
		var v string
		return db.QueryRow(`SELECT value FROM meta WHERE key = 'bulk_load_since'`).Scan(&v) == nil
	}

	rebuild := exec.Command(memsyncBinary(t), "rebuild", "--yes", "--repo", repo)
	rebuild.Env = append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH=embedded", "MEMSYNC_NEO4J_URI=")
	var stderr bytes.Buffer
	rebuild.Stderr = &stderr
	if err := rebuild.Start(); err != nil {
		t.Fatal(err)
	}
	killedAt := -1
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		// The drop empties the store; the load then refills it.
		if n := count(); n >= 2*perAgent/3 && n < 2*perAgent && marker() { // batches in, cursors would be written
			killedAt = n
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := rebuild.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = rebuild.Wait()
	if killedAt < 0 {
		t.Fatalf("never saw the rebuild's bulk load under way (the rebuild may have finished first): %s", stderr.String())
	}
	t.Logf("killed with %d of %d memories loaded", killedAt, 2*perAgent)
	if !marker() {
		t.Fatal("the killed rebuild's store does not say its bulk load was interrupted")
	}
	for _, agent := range []string{"a", "b"} {
		st, err := core.LoadState(layout(repo).StateFile(agent))
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Files) != 0 {
			t.Fatalf("%s's cursors after the killed rebuild: %v, want none (reset)", agent, st.Files)
		}
	}

	mustRun(t, "sync", "--once", "--repo", repo)
	v := mustRun(t, "verify", "--json", "--repo", repo)
	var rep core.VerifyReport
	if err := json.Unmarshal([]byte(v.stdout), &rep); err != nil {
		t.Fatalf("verify --json: %v\n%s", err, v.stdout)
	}
	if !rep.OK || rep.GraphRecords != 2*perAgent || rep.JournalRecords != 2*perAgent {
		t.Fatalf("after the killed rebuild and a sync: %+v", rep)
	}
	if n := count(); n != 2*perAgent {
		t.Fatalf("the store holds %d memories, want %d", n, 2*perAgent)
	}
}
