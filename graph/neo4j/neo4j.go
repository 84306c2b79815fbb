// Package neo4j projects memsync records into a Neo4j 5 database. It
// implements memsync.Graph:
//
//	(:Agent {name})-[:WROTE]->(:Memory {uuid, ts, agent, scope, group_id, kind, text, ...})
//	(:Memory)-[:MENTIONS]->(:Entity {group_id, name})
//	(:Memory)-[:LINKS_TO|SUPERSEDES|CONFLICTS_WITH]->(:Memory)
//
// An edge may point at a uuid that has not been projected yet; it then ends
// on a placeholder (:Memory {uuid}) without a hash, which the record fills
// when it arrives. Placeholders are never reported as memories.
//
// The fulltext index behind Search is eventually consistent: Lucene is
// updated by a background thread of the server after each commit, not inside
// it, which makes a small transaction two to three times cheaper. Get, Walk,
// Hashes and Stats do not use that index and see a write as soon as it is
// committed. Search restores the same guarantee for itself: it starts with
// db.index.fulltext.awaitEventuallyConsistentIndexRefresh(), so it sees every
// write committed before it was called, by any client (a daemon's writes
// included, when `memsync search` runs in another process). On an idle
// index that wait costs about 0.2 ms (measured on the test server); while a
// large batch is being indexed, a search waits for it instead of every
// commit waiting for the index. Waiting only in tests, or only after this
// process's own writes, would leave a search by another process (the CLI
// while the daemon projects) missing records that Get already returns.
//
// Every statement is a constant string; record values travel as parameters
// only.
package neo4j

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"
	"go.uber.org/zap"

	"github.com/memsync/memsync/memsync"
)

// Names of the schema objects memsync creates. They are stable: other tools
// (and operators) may rely on them.
const (
	ConstraintMemoryUUID = "memsync_memory_uuid"
	ConstraintAgentName  = "memsync_agent_name"
	ConstraintEntityKey  = "memsync_entity_group_name"
	IndexMemoryGroupTS   = "memsync_memory_group_ts" // every read names its groups, so ts alone needs no index
	IndexMemoryText      = "memsync_memory_text"     // FULLTEXT on Memory.text and Memory.keywords
)

// schema is created at Open, in order, each statement idempotent.
var schema = []string{
	"CREATE CONSTRAINT " + ConstraintMemoryUUID + " IF NOT EXISTS FOR (m:Memory) REQUIRE m.uuid IS UNIQUE",
	"CREATE CONSTRAINT " + ConstraintAgentName + " IF NOT EXISTS FOR (a:Agent) REQUIRE a.name IS UNIQUE",
	"CREATE CONSTRAINT " + ConstraintEntityKey + " IF NOT EXISTS FOR (e:Entity) REQUIRE (e.group_id, e.name) IS UNIQUE",
	"CREATE INDEX " + IndexMemoryGroupTS + " IF NOT EXISTS FOR (m:Memory) ON (m.group_id, m.ts)",
	// Packets list the core tier's memories (List).
	"CREATE INDEX memsync_memory_tier IF NOT EXISTS FOR (m:Memory) ON (m.tier)",
	createTextIndex,
}

// createTextIndex creates the fulltext index eventually consistent: Lucene
// is updated by a background thread after commit instead of inside it,
// which takes most of a small transaction's cost off the commit path. Search
// waits for that thread (see Search); Get and Walk do not use the index.
const createTextIndex = "CREATE FULLTEXT INDEX " + IndexMemoryText + " IF NOT EXISTS FOR (m:Memory) ON EACH [m.text, m.keywords]" +
	" OPTIONS {indexConfig: {`fulltext.eventually_consistent`: true}}"

// textIndexOptions reads whether the fulltext index exists and is
// eventually consistent.
const textIndexOptions = `
SHOW FULLTEXT INDEXES YIELD name, options WHERE name = $name
RETURN options.indexConfig['fulltext.eventually_consistent'] AS eventual`

// dropTextIndex drops the fulltext index, to create it again with the
// current options.
const dropTextIndex = "DROP INDEX " + IndexMemoryText + " IF EXISTS"

// indexWait bounds how long Open waits for the schema to come online.
const indexWait = 120 * time.Second

// Config says where the database is. Password is used to authenticate and
// nowhere else: it is never logged nor put in an error.
type Config struct {
	URI      string // bolt://host:port or neo4j://host:port; credentials in the URI are refused
	User     string // empty: no authentication
	Password string
	Database string // empty: the server's default database

	// ConnectTimeout bounds establishing a connection; 0 keeps the driver's default.
	ConnectTimeout time.Duration
	// MaxRetryTime bounds the driver's retries of a failing transaction
	// before the error is returned as memsync.ErrUnavailable; 0 keeps the
	// driver's default (30s).
	MaxRetryTime time.Duration
}

// Graph is a memsync.Graph stored in Neo4j. It is safe for concurrent use.
type Graph struct {
	driver   neo4jdrv.DriverWithContext
	database string // resolved at Open, so Identity never depends on server defaults changing
	identity string
	lg       *zap.Logger
}

var _ memsync.Graph = (*Graph)(nil)

// Open connects to the database, verifies that it answers, and creates the
// constraints and indexes memsync relies on (idempotently, tolerating a
// concurrent creator). An unreachable server yields an error wrapping
// memsync.ErrUnavailable. A nil logger logs nothing.
func Open(ctx context.Context, cfg Config, lg *zap.Logger) (*Graph, error) {
	if lg == nil {
		lg = zap.NewNop()
	}
	u, err := url.Parse(cfg.URI)
	if err != nil || u.Host == "" {
		// The parse error may echo the URI; it has no credentials in the
		// supported form, but say nothing more than needed.
		return nil, fmt.Errorf("neo4j: invalid URI (want bolt://host:port)")
	}
	if u.User != nil {
		return nil, fmt.Errorf("neo4j: credentials in the URI are not supported: use the user and password settings")
	}
	hostPort := u.Host
	if u.Port() == "" {
		hostPort = net.JoinHostPort(u.Hostname(), "7687")
	}
	auth := neo4jdrv.NoAuth()
	if cfg.User != "" {
		auth = neo4jdrv.BasicAuth(cfg.User, cfg.Password, "")
	}
	drv, err := neo4jdrv.NewDriverWithContext(cfg.URI, auth, func(c *config.Config) {
		if cfg.ConnectTimeout > 0 {
			c.SocketConnectTimeout = cfg.ConnectTimeout
			c.ConnectionAcquisitionTimeout = 2 * cfg.ConnectTimeout
		}
		if cfg.MaxRetryTime > 0 {
			c.MaxTransactionRetryTime = cfg.MaxRetryTime
		}
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: create driver for %s: %w", hostPort, err)
	}
	g := &Graph{driver: drv, database: cfg.Database, lg: lg}
	fail := func(op string, err error) (*Graph, error) {
		_ = drv.Close(context.Background())
		return nil, wrap(fmt.Sprintf("%s %s", op, hostPort), err)
	}
	if err := drv.VerifyConnectivity(ctx); err != nil {
		return fail("connect to", err)
	}
	db, err := g.resolveDatabase(ctx)
	if err != nil {
		return fail("resolve database on", err)
	}
	g.database = db
	g.identity = "neo4j:" + hostPort + "/" + db
	if err := g.createSchema(ctx); err != nil {
		return fail("create schema on", err)
	}
	lg.Info("neo4j graph open", zap.String("identity", g.identity))
	return g, nil
}

// resolveDatabase asks the server which database a session lands on, so that
// every later session names it explicitly.
func (g *Graph) resolveDatabase(ctx context.Context) (string, error) {
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	name, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) (string, error) {
		res, err := tx.Run(ctx, "RETURN 1", nil)
		if err != nil {
			return "", err
		}
		sum, err := res.Consume(ctx)
		if err != nil {
			return "", err
		}
		return sum.Database().Name(), nil
	})
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", errors.New("server did not name the database")
	}
	return name, nil
}

func (g *Graph) createSchema(ctx context.Context) error {
	if err := g.upgradeTextIndex(ctx); err != nil {
		return err
	}
	for _, stmt := range schema {
		if err := g.write(ctx, stmt, nil); err != nil {
			if isEquivalentSchema(err) {
				g.lg.Debug("schema rule created concurrently", zap.String("statement", stmt))
				continue
			}
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	_, err := s.ExecuteRead(ctx, func(tx neo4jdrv.ManagedTransaction) (any, error) {
		res, err := tx.Run(ctx, "CALL db.awaitIndexes($seconds)", map[string]any{"seconds": int64(indexWait / time.Second)})
		if err != nil {
			return nil, err
		}
		return res.Consume(ctx)
	})
	if err != nil {
		return fmt.Errorf("wait for indexes: %w", err)
	}
	return nil
}

// upgradeTextIndex drops a fulltext index that an earlier version created
// fully consistent (CREATE … IF NOT EXISTS would keep it as it is), so that
// createSchema creates it again with createTextIndex's options. The new
// index is populated from the store before Open returns; until then (once,
// at the first Open of this version) searches by other clients fail.
func (g *Graph) upgradeTextIndex(ctx context.Context) error {
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	eventual, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) (any, error) {
		res, err := tx.Run(ctx, textIndexOptions, map[string]any{"name": IndexMemoryText})
		if err != nil {
			return nil, err
		}
		recs, err := res.Collect(ctx)
		if err != nil || len(recs) == 0 {
			return true, err // absent: createSchema creates it
		}
		return recs[0].Values[0], nil
	})
	if err != nil {
		return fmt.Errorf("read options of %s: %w", IndexMemoryText, err)
	}
	if eventual == true {
		return nil
	}
	g.lg.Info("recreating the fulltext index as eventually consistent", zap.String("index", IndexMemoryText))
	if err := g.write(ctx, dropTextIndex, nil); err != nil {
		return fmt.Errorf("%s: %w", dropTextIndex, err)
	}
	return nil
}

// isEquivalentSchema reports the error a concurrent creator of the same
// schema rule gets: the rule exists, which is what we wanted.
func isEquivalentSchema(err error) bool {
	var ne *neo4jdrv.Neo4jError
	if !errors.As(err, &ne) {
		return false
	}
	switch ne.Code {
	case "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
		"Neo.ClientError.Schema.ConstraintAlreadyExists",
		"Neo.ClientError.Schema.IndexAlreadyExists":
		return true
	}
	return false
}

// write runs one statement in its own managed write transaction.
func (g *Graph) write(ctx context.Context, stmt string, params map[string]any) error {
	s := g.session(ctx, neo4jdrv.AccessModeWrite)
	defer s.Close(ctx)
	_, err := s.ExecuteWrite(ctx, func(tx neo4jdrv.ManagedTransaction) (any, error) {
		res, err := tx.Run(ctx, stmt, params)
		if err != nil {
			return nil, err
		}
		return res.Consume(ctx)
	})
	return err
}

func (g *Graph) session(ctx context.Context, mode neo4jdrv.AccessMode) neo4jdrv.SessionWithContext {
	return g.driver.NewSession(ctx, neo4jdrv.SessionConfig{DatabaseName: g.database, AccessMode: mode})
}

// Identity names the server and database, never the credentials:
// "neo4j:host:port/database".
func (g *Graph) Identity() string { return g.identity }

// Close releases the driver's connections.
func (g *Graph) Close() error {
	if err := g.driver.Close(context.Background()); err != nil {
		return fmt.Errorf("neo4j: close: %w", err)
	}
	return nil
}

// wrap adds context to err and marks it memsync.ErrUnavailable when it means
// the server cannot be reached or keeps failing transiently.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if unavailable(err) {
		return fmt.Errorf("neo4j: %s: %w: %w", op, memsync.ErrUnavailable, err)
	}
	return fmt.Errorf("neo4j: %s: %w", op, err)
}

// unavailable reports whether err means "down, unreachable or transiently
// failing" as opposed to "this request can never succeed".
func unavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, memsync.ErrUnavailable) {
		return true
	}
	if errors.Is(err, context.Canceled) {
		return false // the caller gave up; that says nothing about the server
	}
	var limit *neo4jdrv.TransactionExecutionLimit
	if errors.As(err, &limit) {
		// The driver only keeps retrying retryable errors (or ran out of time doing so).
		return true
	}
	var conn *neo4jdrv.ConnectivityError
	if errors.As(err, &conn) {
		return true
	}
	if neo4jdrv.IsRetryable(err) {
		return true
	}
	var ne *neo4jdrv.Neo4jError
	if errors.As(err, &ne) {
		switch ne.Code {
		case "Neo.TransientError.General.DatabaseUnavailable",
			"Neo.ClientError.Cluster.NotALeader",
			"Neo.ClientError.General.ForbiddenOnReadOnlyDatabase",
			"Neo.ClientError.Transaction.Terminated",
			"Neo.ClientError.Transaction.LockClientStopped":
			return true
		}
		return ne.IsRetriableTransient()
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var nerr net.Error
	return errors.As(err, &nerr)
}
