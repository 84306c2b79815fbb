// Package neo4j projects memsync records into a Neo4j 5 database. It
// implements memsync.Graph:
//
//	(:Agent {name})-[:WROTE]->(:Memory {uuid, ts, agent, scope, group_id, kind, text, ...})
//	(:Memory)-[:MENTIONS]->(:MemsyncEntity {group_id, name})
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
	"sync"
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
	ConstraintEntityKey  = "memsync_entity_key"      // on :MemsyncEntity, a label Graphiti's :Entity nodes never carry (upgradeEntities)
	IndexMemoryGroupTS   = "memsync_memory_group_ts" // every read names its groups, so ts alone needs no index
	IndexMemorySession   = "memsync_memory_session"  // (session, ts): the neighbours of a search hit
	IndexMemoryText      = "memsync_memory_terms"    // FULLTEXT, whitespace analyzer, on Memory.terms and Memory.keywords
)

// legacyTextIndex is the fulltext index of earlier versions (standard
// analyzer on Memory.text and Memory.keywords); Open drops it.
const legacyTextIndex = "memsync_memory_text"

// constraintGeneration keeps the generation marker one node.
const constraintGeneration = "memsync_generation_key"

// indexMemoryTier is the index of the memories' tier.
const indexMemoryTier = "memsync_memory_tier"

// schema is created at Open, in order, each statement idempotent.
var schema = []string{
	"CREATE CONSTRAINT " + ConstraintMemoryUUID + " IF NOT EXISTS FOR (m:Memory) REQUIRE m.uuid IS UNIQUE",
	"CREATE CONSTRAINT " + ConstraintAgentName + " IF NOT EXISTS FOR (a:Agent) REQUIRE a.name IS UNIQUE",
	"CREATE CONSTRAINT " + ConstraintEntityKey + " IF NOT EXISTS FOR (e:MemsyncEntity) REQUIRE (e.group_id, e.name) IS UNIQUE",
	// One generation marker (Drop, Generation), even when two hosts drop at once.
	"CREATE CONSTRAINT " + constraintGeneration + " IF NOT EXISTS FOR (g:MemsyncGeneration) REQUIRE g.key IS UNIQUE",
	"CREATE INDEX " + IndexMemoryGroupTS + " IF NOT EXISTS FOR (m:Memory) ON (m.group_id, m.ts)",
	"CREATE INDEX " + IndexMemorySession + " IF NOT EXISTS FOR (m:Memory) ON (m.session, m.ts)",
	// Packets list the core tier's memories (List).
	"CREATE INDEX " + indexMemoryTier + " IF NOT EXISTS FOR (m:Memory) ON (m.tier)",
	createTextIndex,
}

// createTextIndex creates the fulltext index eventually consistent: Lucene
// is updated by a background thread after commit instead of inside it,
// which takes most of a small transaction's cost off the commit path. Search
// waits for that thread (see Search); Get and Walk do not use the index.
// Its analyzer only splits at spaces: the properties it reads hold terms
// that package analysis made (see setTerms), as every search path does.
const createTextIndex = "CREATE FULLTEXT INDEX " + IndexMemoryText + " IF NOT EXISTS FOR (m:Memory) ON EACH [m.terms, m.keywords]" +
	" OPTIONS {indexConfig: {`fulltext.eventually_consistent`: true, `fulltext.analyzer`: 'whitespace'}}"

// textIndexOptions reads whether the fulltext index exists, is eventually
// consistent and splits at whitespace only.
const textIndexOptions = `
SHOW FULLTEXT INDEXES YIELD name, options WHERE name = $name
RETURN options.indexConfig['fulltext.eventually_consistent'] = true
   AND options.indexConfig['fulltext.analyzer'] = 'whitespace' AS current`

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
	// Embedder, when set, gives every memory a vector and makes Search
	// hybrid (see IndexMemoryEmbedding); nil: lexical only.
	Embedder memsync.Embedder

	// MaxRetryTime bounds the driver's retries of a failing transaction
	// before the error is returned as memsync.ErrUnavailable; 0 keeps the
	// driver's default (30s).
	MaxRetryTime time.Duration

	// Graphiti turns on the Graphiti-shaped projection beside memsync's
	// own (graphiti.go, docs/design/graphiti.md): the shared group only,
	// unless GraphitiPrivate also projects every agent's private group.
	Graphiti        bool
	GraphitiPrivate bool
}

// Graph is a memsync.Graph stored in Neo4j. It is safe for concurrent use.
type Graph struct {
	driver   neo4jdrv.DriverWithContext
	database string // resolved at Open, so Identity never depends on server defaults changing
	identity string
	lg       *zap.Logger

	emb          memsync.Embedder   // nil: lexical only
	reembedStop  context.CancelFunc // stops Open's background re-embedding
	reembedDone  chan struct{}      // closed when it is over; nil if none ran
	reembedError error              // what it failed with; set before reembedDone closes

	// Generations in slots (generation.go).
	genMu    sync.Mutex
	build    *build             // the rebuild in progress in this process; nil if none
	dropStop context.CancelFunc // stops the background drop of an old generation
	dropDone chan struct{}      // closed when it is over; nil if none ran

	// The Graphiti shape (graphiti.go).
	graphiti        bool
	graphitiPrivate bool
	pass            string // the id this process's incremental projections carry
}

var _ memsync.Graph = (*Graph)(nil)

// Open connects to the database, verifies that it answers, and creates the
// constraints and indexes memsync relies on (idempotently, tolerating a
// concurrent creator). An unreachable server yields an error wrapping
// memsync.ErrUnavailable. A nil logger logs nothing.
func Open(ctx context.Context, cfg Config, lg *zap.Logger) (*Graph, error) {
	g, hostPort, err := newGraph(cfg, lg)
	if err != nil {
		return nil, err
	}
	lg = g.lg
	drv := g.driver
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
	if err := g.openGraphiti(ctx); err != nil {
		return fail("set up the Graphiti shape on", err)
	}
	if err := g.upgradeRetirement(ctx); err != nil {
		return fail("upgrade supersession on", err)
	}
	if err := g.openVectors(ctx); err != nil {
		return fail("set up vectors on", err)
	}
	if err := g.resumeDrop(ctx); err != nil {
		return fail("resume dropping an old generation on", err)
	}
	lg.Info("neo4j graph open", zap.String("identity", g.identity))
	return g, nil
}

// newGraph checks cfg and makes the driver; it connects to nothing yet.
func newGraph(cfg Config, lg *zap.Logger) (*Graph, string, error) {
	if lg == nil {
		lg = zap.NewNop()
	}
	u, err := url.Parse(cfg.URI)
	if err != nil || u.Host == "" {
		// The parse error may echo the URI; it has no credentials in the
		// supported form, but say nothing more than needed.
		return nil, "", fmt.Errorf("neo4j: invalid URI (want bolt://host:port)")
	}
	if u.User != nil {
		return nil, "", fmt.Errorf("neo4j: credentials in the URI are not supported: use the user and password settings")
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
		return nil, "", fmt.Errorf("neo4j: create driver for %s: %w", hostPort, err)
	}
	g := &Graph{driver: drv, database: cfg.Database, lg: lg,
		graphiti: cfg.Graphiti, graphitiPrivate: cfg.Graphiti && cfg.GraphitiPrivate, pass: newPass()}
	if memsync.Embeds(cfg.Embedder) {
		g.emb = cfg.Embedder
	}
	return g, hostPort, nil
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
	// Both slots' schema (generation.go): the rules of slot 1 are slot
	// 0's with its labels and names.
	for _, slot := range []int{0, 1} {
		for _, stmt := range schema {
			if slot == 1 && !namesSlot(stmt, nil) {
				continue // not a slot's (the generation marker's)
			}
			if err := g.writeSlot(ctx, slot, stmt, nil); err != nil {
				if isEquivalentSchema(err) {
					g.lg.Debug("schema rule created concurrently", zap.String("statement", stmt))
					continue
				}
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
	}
	if err := g.awaitIndexes(ctx); err != nil {
		return err
	}
	return g.upgradeEntities(ctx)
}

// upgradeTextIndex replaces the fulltext index of earlier versions: when
// it exists, every memory is first given its analyzed terms (backfillTerms;
// a crash meanwhile leaves the old index, so the next Open starts again),
// then it is dropped. A fulltext index of this name with other options is
// dropped too (CREATE … IF NOT EXISTS would keep it as it is). createSchema
// then creates the index with createTextIndex's options, and it is
// populated from the store before Open returns; until then (once, at the
// first Open of this version) searches by other clients fail.
func (g *Graph) upgradeTextIndex(ctx context.Context) error {
	legacy, err := g.readValue(ctx, textIndexOptions, map[string]any{"name": legacyTextIndex})
	if err != nil {
		return fmt.Errorf("read options of %s: %w", legacyTextIndex, err)
	}
	if legacy != nil {
		if err := g.backfillTerms(ctx); err != nil {
			return err
		}
		g.lg.Info("dropping the fulltext index of an earlier version", zap.String("index", legacyTextIndex))
		if err := g.write(ctx, "DROP INDEX "+legacyTextIndex+" IF EXISTS", nil); err != nil {
			return fmt.Errorf("drop %s: %w", legacyTextIndex, err)
		}
	}
	current, err := g.readValue(ctx, textIndexOptions, map[string]any{"name": IndexMemoryText})
	if err != nil {
		return fmt.Errorf("read options of %s: %w", IndexMemoryText, err)
	}
	if current == nil || current == true {
		return nil // absent (createSchema creates it), or as wanted
	}
	g.lg.Info("recreating the fulltext index (eventually consistent, whitespace analyzer)", zap.String("index", IndexMemoryText))
	if err := g.write(ctx, dropTextIndex, nil); err != nil {
		return fmt.Errorf("%s: %w", dropTextIndex, err)
	}
	return nil
}

// readValue runs a read query and returns the first value of its first
// row, nil when there is none.
func (g *Graph) readValue(ctx context.Context, query string, params map[string]any) (any, error) {
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	row, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]any, error) {
		res, err := tx.Run(ctx, query, params)
		if err != nil {
			return nil, err
		}
		recs, err := res.Collect(ctx)
		if err != nil || len(recs) == 0 {
			return []any{}, err
		}
		if recs[0].Values[0] == nil {
			return []any{false}, nil
		}
		return recs[0].Values[:1], nil
	})
	if err != nil || len(row) == 0 {
		return nil, err
	}
	return row[0], nil
}

// backfillPage is how many memories backfillTerms updates per transaction.
const backfillPage = 2000

// memoriesAfter lists memories in uuid order (the uniqueness constraint's index).
const memoriesAfter = `MATCH (m:Memory) WHERE m.uuid > $after AND m.hash IS NOT NULL
RETURN m.uuid ORDER BY m.uuid LIMIT $n`

// setTermsRows sets the analyzed terms of memories.
const setTermsRows = `UNWIND $rows AS r MATCH (m:Memory {uuid: r.uuid})
SET m.terms = r.terms, m.keywords = r.keywords`

// backfillTerms gives every memory its analyzed terms (setTerms), a page
// at a time in uuid order, so that the fulltext index finds the memories
// an earlier version stored.
func (g *Graph) backfillTerms(ctx context.Context) error {
	total, after := 0, ""
	for {
		s := g.session(ctx, neo4jdrv.AccessModeRead)
		uuids, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]string, error) {
			res, err := tx.Run(ctx, memoriesAfter, map[string]any{"after": after, "n": int64(backfillPage)})
			if err != nil {
				return nil, err
			}
			var out []string
			for res.Next(ctx) {
				u, _ := res.Record().Values[0].(string)
				out = append(out, u)
			}
			return out, res.Err()
		})
		s.Close(ctx)
		if err != nil {
			return fmt.Errorf("backfill terms: %w", err)
		}
		if len(uuids) == 0 {
			break
		}
		after = uuids[len(uuids)-1]
		nodes, err := g.Get(ctx, uuids)
		if err != nil {
			return fmt.Errorf("backfill terms: %w", err)
		}
		rows := make([]any, 0, len(nodes))
		for _, n := range nodes {
			props := map[string]any{}
			setTerms(props, &n.Record)
			rows = append(rows, map[string]any{"uuid": n.UUID, "terms": props["terms"], "keywords": props["keywords"]})
		}
		if err := g.write(ctx, setTermsRows, map[string]any{"rows": rows}); err != nil {
			return fmt.Errorf("backfill terms: %w", err)
		}
		total += len(rows)
	}
	g.lg.Info("gave the memories of an earlier version their search terms", zap.Int("memories", total))
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
	return g.writeTx(ctx, g.session(ctx, neo4jdrv.AccessModeWrite), stmt, params)
}

// writeSlot runs one statement in its own managed write transaction, in
// slot (generation.go).
func (g *Graph) writeSlot(ctx context.Context, slot int, stmt string, params map[string]any) error {
	return g.writeTx(ctx, g.sessionSlot(ctx, neo4jdrv.AccessModeWrite, slot), stmt, params)
}

func (g *Graph) writeTx(ctx context.Context, s neo4jdrv.SessionWithContext, stmt string, params map[string]any) error {
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

// session opens a session whose transactions run in the slot this Graph
// builds, or else in the one the generation marker names (generation.go).
func (g *Graph) session(ctx context.Context, mode neo4jdrv.AccessMode) neo4jdrv.SessionWithContext {
	slot, _ := g.buildSlot()
	return g.sessionSlot(ctx, mode, slot)
}

// sessionSlot opens a session whose transactions run in slot; -1: the
// slot the marker names, read in each transaction.
func (g *Graph) sessionSlot(ctx context.Context, mode neo4jdrv.AccessMode, slot int) neo4jdrv.SessionWithContext {
	s := g.driver.NewSession(ctx, neo4jdrv.SessionConfig{DatabaseName: g.database, AccessMode: mode})
	return slotSession{SessionWithContext: s, slot: slot}
}

// Identity names the server and database, never the credentials:
// "neo4j:host:port/database".
func (g *Graph) Identity() string { return g.identity }

// Close releases the driver's connections.
func (g *Graph) Close() error {
	g.stopDropper()
	if g.reembedStop != nil {
		g.reembedStop()
		<-g.reembedDone
	}
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
