package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// After IdleRelease without writes the store gives its caches back and
// drops its seen filter; reads and writes go on as before (a memory
// applied again is still one), and a release that fires after Close does
// nothing.
func TestIdleReleaseKeepsWorking(t *testing.T) {
	g := openTest(t)
	apply(t, g, mem("mem_1", 1, "the first #note"))
	time.Sleep(IdleRelease + 500*time.Millisecond)
	apply(t, g, mem("mem_2", 2, "the second #note"))
	hits, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: "note", Groups: []string{journal.PrivateGroup("alice"), journal.SharedGroup}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := g.Stats(context.Background()); err != nil || st.Memories != 2 {
		t.Fatalf("Stats = %+v, %v; want 2 memories", st, err)
	}
	if len(hits) != 2 {
		t.Fatalf("search after an idle release found %d, want 2", len(hits))
	}
	// The seen filter went with the release: a uuid stored before it is
	// looked up, not taken for new, so it is still one memory.
	g.mu.Lock()
	held := g.seen != nil
	g.mu.Unlock()
	if held {
		t.Error("the seen filter outlived the idle release")
	}
	apply(t, g, mem("mem_1", 1, "the first #note"))
	if st, err := g.Stats(context.Background()); err != nil || st.Memories != 2 {
		t.Fatalf("Stats after the first memory again = %+v, %v; want 2 memories", st, err)
	}
	g2 := openTest(t)
	apply(t, g2, mem("mem_3", 3, "written just before close"))
	if err := g2.Close(); err != nil {
		t.Fatal(err)
	}
	g2.release() // what the timer would do, late
}

// Once writes stop, the store checkpoints both files' WALs: the database
// files alone (without their -wal) hold every memory and the search
// file's watermark covers them, so a reader in another process reads the
// mapped file instead of a WAL. Before the idle checkpoint (at most
// wal_autocheckpoint's 64 MiB later) the files alone held none of them.
func TestIdleCheckpointsTheWALs(t *testing.T) {
	g := openTest(t)
	var batch []memsync.Memory
	for i := range 500 {
		batch = append(batch, mem(fmt.Sprintf("mem_%04d", i), i, fmt.Sprintf("note %d about the idle checkpoint", i)))
	}
	apply(t, g, batch...)
	if _, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: "idle", Groups: []string{journal.SharedGroup}}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(g.Path())
	memories := func() int64 { return fileAlone(t, filepath.Join(dir, FileName), `SELECT count(*) FROM memories`) }
	indexed := func() int64 { return fileAlone(t, filepath.Join(dir, SearchFileName), `SELECT through FROM indexed`) }
	deadline := time.Now().Add(IdleRelease + 5*time.Second)
	for memories() != 500 || indexed() != 500 {
		if time.Now().After(deadline) {
			t.Fatalf("%v after the last write the files alone hold %d memories, indexed through %d; want 500 and 500",
				IdleRelease+5*time.Second, memories(), indexed())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A store a crash left with its WAL full (copied, -wal and all, while
// open) is checkpointed by the next writer's open once it has been quiet
// for IdleRelease, though it writes nothing: a daemon restarted with
// nothing to project must not leave every reader a 64 MiB WAL.
func TestOpenCheckpointsALeftoverWAL(t *testing.T) {
	g := openTest(t)
	var batch []memsync.Memory
	for i := range 300 {
		batch = append(batch, mem(fmt.Sprintf("mem_%04d", i), i, fmt.Sprintf("note %d before the crash", i)))
	}
	apply(t, g, batch...)
	crashed := t.TempDir()
	for _, name := range []string{FileName, FileName + "-wal"} {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(g.Path()), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(crashed, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	memories := func() int64 { return fileAlone(t, filepath.Join(crashed, FileName), `SELECT count(*) FROM memories`) }
	if n := memories(); n == 300 {
		t.Fatal("the copied file alone already holds every memory: nothing left in the WAL to test with")
	}
	reopened, err := Open(crashed, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	deadline := time.Now().Add(IdleRelease + 5*time.Second)
	for memories() != 300 {
		if time.Now().After(deadline) {
			t.Fatalf("%v after the open the file alone holds %d memories, want 300", IdleRelease+5*time.Second, memories())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fileAlone copies the database file at path without its -wal and answers
// query (one integer) from the copy: what the file itself holds; -1 when
// it does not even hold the table yet.
func fileAlone(t *testing.T, path, query string) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(copied, data, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+copied)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(query).Scan(&n); err != nil {
		return -1
	}
	return n
}
