package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// backend is one column of the table: a graph memsync projects into.
type backend struct {
	name      string       // column header
	graphFlag string       // memsync --graph value
	neo       *neo4jServer // nil for the embedded store
	tmp       string       // scratch directory of the run
	logf      func(format string, args ...any)
	emb       memsync.Embedder // vectors (--vectors); nil: lexical only
	cliModel  string           // --embedder of every command it runs (--vectors-model's real model); "": none
	graphiti  bool             // Neo4j: every command it runs passes --graphiti
}

// neo4jServer is the Neo4j the run measures. The memsync graph and a raw
// driver stay open for the whole run; the server itself is shared with
// other processes' tests, so every figure takes the test lock (see lock).
type neo4jServer struct {
	cfg     neo4j.Config
	graph   *neo4j.Graph
	drv     neo4jdrv.DriverWithContext
	version string
}

// lockPath is the file whose exclusive flock every user of the test server
// holds while it uses it (graph/neo4j/neo4jtest.LockPath).
func lockPath() string { return filepath.Join(os.TempDir(), "memsync-neo4j-test.lock") }

// lockNeo4j takes the cross-process test lock, saying so when it has to
// wait for another process.
func lockNeo4j(logf func(string, ...any)) (unlock func(), err error) {
	f, err := os.OpenFile(lockPath(), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("neo4j test lock: %w", err)
	}
	err = journal.Flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		logf("waiting for the Neo4j test lock %s (another process is using the server)", lockPath())
		err = journal.Flock(f, syscall.LOCK_EX)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("neo4j test lock %s: %w", lockPath(), err)
	}
	return func() {
		_ = journal.Flock(f, syscall.LOCK_UN)
		f.Close()
	}, nil
}

// openNeo4j connects to uri (user, password and database from the
// MEMSYNC_NEO4J_* environment, as memsync reads them) and reads its version.
func openNeo4j(ctx context.Context, uri string, emb memsync.Embedder, logf func(string, ...any)) (*neo4jServer, error) {
	cfg := neo4j.Config{URI: uri, User: os.Getenv("MEMSYNC_NEO4J_USER"), Password: os.Getenv("MEMSYNC_NEO4J_PASSWORD"),
		Database: os.Getenv("MEMSYNC_NEO4J_DATABASE"), ConnectTimeout: 5 * time.Second, Embedder: emb}
	if cfg.Password == "" {
		cfg.User = "" // a server without auth takes no credentials, as memsync does
	}
	unlock, err := lockNeo4j(logf)
	if err != nil {
		return nil, err
	}
	defer unlock()
	octx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	g, err := neo4j.Open(octx, cfg, nil)
	if err != nil {
		return nil, err
	}
	auth := neo4jdrv.NoAuth()
	if cfg.User != "" {
		auth = neo4jdrv.BasicAuth(cfg.User, cfg.Password, "")
	}
	drv, err := neo4jdrv.NewDriverWithContext(uri, auth)
	if err != nil {
		g.Close()
		return nil, err
	}
	s := &neo4jServer{cfg: cfg, graph: g, drv: drv}
	s.version, err = s.serverVersion(octx)
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// serverVersion is what CALL dbms.components() says: "Neo4j Kernel 5.26.0 community".
func (s *neo4jServer) serverVersion(ctx context.Context) (string, error) {
	res, err := neo4jdrv.ExecuteQuery(ctx, s.drv,
		"CALL dbms.components() YIELD name, versions, edition RETURN name, versions[0] AS version, edition",
		nil, neo4jdrv.EagerResultTransformer, neo4jdrv.ExecuteQueryWithDatabase(s.cfg.Database))
	if err != nil {
		return "", fmt.Errorf("neo4j version: %w", err)
	}
	var parts []string
	for _, r := range res.Records {
		parts = append(parts, fmt.Sprintf("%v %v %v", r.Values[0], r.Values[1], r.Values[2]))
	}
	return strings.Join(parts, ", "), nil
}

func (s *neo4jServer) close() {
	s.graph.Close()
	s.drv.Close(context.Background())
}

// exclusive runs fn as the only user of the graph server: on Neo4j it holds
// the test lock and drops the graph before and after.
func (b *backend) exclusive(ctx context.Context, fn func() error) error {
	if b.neo == nil {
		return fn()
	}
	unlock, err := lockNeo4j(b.logf)
	if err != nil {
		return err
	}
	defer unlock()
	if err := b.neo.graph.Drop(ctx); err != nil {
		return fmt.Errorf("drop before: %w", err)
	}
	ferr := fn()
	if err := b.neo.graph.Drop(context.WithoutCancel(ctx)); err != nil && ferr == nil {
		ferr = fmt.Errorf("drop after: %w", err)
	}
	return ferr
}

// fresh returns an empty graph for one run and what releases it. Call it
// inside exclusive.
func (b *backend) fresh(ctx context.Context) (memsync.Graph, func(), error) {
	if b.neo != nil {
		if err := b.neo.graph.Drop(ctx); err != nil {
			return nil, nil, err
		}
		return b.neo.graph, func() {}, nil
	}
	dir, err := os.MkdirTemp(b.tmp, "graph-")
	if err != nil {
		return nil, nil, err
	}
	g, err := embedded.Open(dir, nil, embedded.WithEmbedder(b.emb))
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return g, func() { g.Close(); os.RemoveAll(dir) }, nil
}

// cliArgs select this backend on a memsync command line.
func (b *backend) cliArgs() []string {
	var args []string
	if b.cliModel != "" {
		args = append(args, "--embedder", b.cliModel)
	}
	if b.neo == nil {
		return append(args, "--graph", "embedded")
	}
	args = append(args, "--graph", "neo4j", "--neo4j-uri", b.neo.cfg.URI)
	if b.neo.cfg.User != "" {
		args = append(args, "--neo4j-user", b.neo.cfg.User)
	}
	if b.neo.cfg.Database != "" {
		args = append(args, "--neo4j-database", b.neo.cfg.Database)
	}
	if b.graphiti {
		args = append(args, "--graphiti")
	}
	return args
}

// childEnv is the environment of memsync children: this one without the
// settings that would override their command line.
func childEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "MEMSYNC_REPO", "MEMSYNC_GRAPH", "MEMSYNC_NEO4J_URI", "MEMSYNC_CONFIG", "MEMSYNC_EMBEDDER":
			continue
		}
		out = append(out, kv)
	}
	return out
}
