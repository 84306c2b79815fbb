package memsync_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memsync/memsync/memsync"
)

// TestWriteAtomicConcurrentWriters: writers replacing one file at once (two
// daemons on a repository, a rebuild beside a daemon) each succeed, and the
// file is always one writer's whole content. With one fixed temp name a
// writer renamed or truncated another's temp file and failed.
func TestWriteAtomicConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sync", "state.json")
	const writers, each = 8, 100
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := bytes.Repeat([]byte(fmt.Sprintf("writer %d\n", w)), 2000)
			for range each {
				if err := (memsync.OSDisk{}).WriteAtomic(path, data); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent WriteAtomic: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if want := bytes.Repeat(append(first, '\n'), 2000); !bytes.Equal(data, want) {
		t.Fatalf("the file mixes writers: %d bytes", len(data))
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.Contains(e.Name(), "tmp") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}
