package embedded

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/memsync"
)

// The checkpointer, not the writer's COMMIT, copies the WAL back into the
// main file once enough rows were written; a store it checkpointed under
// the writer reopens whole.
func TestCheckpointerCopiesTheWAL(t *testing.T) {
	defer func(n int64) { checkpointEvery = n }(checkpointEvery)
	checkpointEvery = 256 << 10
	dir := t.TempDir()
	g, err := Open(dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("checkpointed words ", 50)
	for b := range 10 {
		batch := make([]memsync.Memory, 100)
		for i := range batch {
			batch[i] = mem(fmt.Sprintf("mem_ck_%d_%d", b, i), b*100+i, text)
		}
		apply(t, g, batch...)
	}
	// About 1 MB of rows: the checkpointer ran, SQLite's own (at 128 MiB
	// of WAL) could not have.
	deadline := time.Now().Add(10 * time.Second)
	for g.ckpt.copied.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g.ckpt.copied.Load() == 0 {
		t.Fatal("the checkpointer copied no WAL frame into the main file")
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	g, err = Open(dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if st, err := g.Stats(context.Background()); err != nil || st.Memories != 1000 {
		t.Fatalf("reopened: %+v, %v; want 1000 memories", st, err)
	}
	// A store opened read-only has none, and a nil one ignores the writer.
	var none *checkpointer
	none.committed(1 << 30)
}
