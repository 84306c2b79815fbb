// Package neo4jtest opens the test Neo4j server named by the environment,
// one test at a time across every test process of the machine.
//
//	MEMSYNC_NEO4J_URI       bolt://127.0.0.1:7687; unset: tests skip
//	MEMSYNC_NEO4J_USER      optional
//	MEMSYNC_NEO4J_PASSWORD  optional
//	MEMSYNC_NEO4J_DATABASE  optional
//	MEMSYNC_REQUIRE_NEO4J=1 an unset URI fails the test instead of skipping it
package neo4jtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/graph/neo4j"
)

// LockPath is the file whose exclusive lock a test holds while it uses the
// server: the database is shared by every package's tests.
func LockPath() string { return filepath.Join(os.TempDir(), "memsync-neo4j-test.lock") }

// Config returns the server configuration from the environment, skipping
// the test (or failing it, with MEMSYNC_REQUIRE_NEO4J=1) when none is set.
func Config(t testing.TB) neo4j.Config {
	t.Helper()
	uri := os.Getenv("MEMSYNC_NEO4J_URI")
	if uri == "" {
		if os.Getenv("MEMSYNC_REQUIRE_NEO4J") == "1" {
			t.Fatal("MEMSYNC_REQUIRE_NEO4J=1 but MEMSYNC_NEO4J_URI is not set: start a server with `scripts/neo4j start` and export the URI it prints")
		}
		t.Skip("MEMSYNC_NEO4J_URI not set: skipping Neo4j tests (scripts/neo4j start)")
	}
	return neo4j.Config{
		URI:      uri,
		User:     os.Getenv("MEMSYNC_NEO4J_USER"),
		Password: os.Getenv("MEMSYNC_NEO4J_PASSWORD"),
		Database: os.Getenv("MEMSYNC_NEO4J_DATABASE"),
	}
}

// Open returns an empty graph on the test server, holding the cross-process
// test lock until the test ends; the graph is closed then too.
func Open(t testing.TB) *neo4j.Graph {
	t.Helper()
	return OpenWith(t, nil)
}

// OpenWith is Open with the configuration adjusted by adjust (nil: none),
// e.g. to set an embedder.
func OpenWith(t testing.TB, adjust func(*neo4j.Config)) *neo4j.Graph {
	t.Helper()
	cfg := Config(t)
	if adjust != nil {
		adjust(&cfg)
	}
	unlock := lock(t)
	t.Cleanup(unlock)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	g, err := neo4j.Open(ctx, cfg, zaptest.NewLogger(t, zaptest.Level(zapcore.InfoLevel)))
	if err != nil {
		t.Fatalf("open neo4j: %v", err)
	}
	// Registered after unlock, so it runs before it: close, then release.
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("close neo4j: %v", err)
		}
	})
	if err := g.Drop(ctx); err != nil {
		t.Fatalf("drop neo4j graph: %v", err)
	}
	return g
}

// owner is this process's hold on the test lock. A test that already holds
// it (or whose parent test does) may open again: the suite can open several
// graphs in one test, one after the other.
var owner struct {
	sync.Mutex
	cond  *sync.Cond
	name  string // test holding the lock; "" when free
	depth int
	file  *os.File
}

func lock(t testing.TB) func() {
	t.Helper()
	owner.Lock()
	defer owner.Unlock()
	if owner.cond == nil {
		owner.cond = sync.NewCond(&owner.Mutex)
	}
	name := t.Name()
	for owner.name != "" && owner.name != name && !strings.HasPrefix(name, owner.name+"/") {
		owner.cond.Wait()
	}
	if owner.name == "" {
		f, err := flock()
		if err != nil {
			t.Fatalf("lock %s: %v", LockPath(), err)
		}
		owner.name, owner.file = name, f
	}
	owner.depth++
	return func() {
		owner.Lock()
		defer owner.Unlock()
		owner.depth--
		if owner.depth > 0 {
			return
		}
		_ = syscall.Flock(int(owner.file.Fd()), syscall.LOCK_UN)
		owner.file.Close()
		owner.name, owner.file = "", nil
		owner.cond.Broadcast()
	}
}

// flock takes the cross-process lock, waiting for other processes' tests.
func flock() (*os.File, error) {
	f, err := os.OpenFile(LockPath(), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
