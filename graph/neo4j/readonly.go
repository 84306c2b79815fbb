package neo4j

import (
	"context"
	"errors"
	"fmt"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"go.uber.org/zap"
)

// ErrNotReadable marks a database that OpenReadOnly cannot serve as it is:
// a constraint or index memsync relies on is missing, not online, or of an
// earlier version. Open (the writer's open) creates or upgrades them.
var ErrNotReadable = errors.New("database not readable without a writer")

// readSchema reads the state of memsync's constraints' and indexes' names
// in $names (with the fulltext index's options), one row per name found.
const readSchema = `
SHOW INDEXES YIELD name, state, options WHERE name IN $names
RETURN name, state,
   coalesce(options.indexConfig['fulltext.eventually_consistent'] = true
   AND options.indexConfig['fulltext.analyzer'] = 'whitespace', false) AS current`

// OpenReadOnly connects for a short-lived read command (search, packet,
// show, explain): it verifies connectivity, then reads the schema's state
// and resolves the database in one read transaction, where Open also
// creates every constraint and index (a write transaction each) and waits
// for the indexes. It returns an error wrapping ErrNotReadable when the
// schema is not all there and online (Open then does what is needed), and
// one wrapping memsync.ErrUnavailable when the server cannot be reached.
func OpenReadOnly(ctx context.Context, cfg Config, lg *zap.Logger) (*Graph, error) {
	g, hostPort, err := newGraph(cfg, lg)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Graph, error) {
		_ = g.driver.Close(context.Background())
		return nil, err
	}
	// An unreachable server fails here at once; a read transaction would
	// retry it for the driver's whole retry time.
	if err := g.driver.VerifyConnectivity(ctx); err != nil {
		return fail(wrap("connect to "+hostPort, err))
	}
	// One read transaction both reads the schema's state and names the
	// database the session landed on (its summary), which every later
	// session then names: a round trip less than resolveDatabase and a
	// read after it.
	want := []string{ConstraintMemoryUUID, ConstraintAgentName, ConstraintEntityKey,
		IndexMemoryGroupTS, IndexMemorySession, indexMemoryTier, IndexMemoryText}
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	type answer struct {
		rows []*neo4jdrv.Record
		db   string
	}
	a, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) (answer, error) {
		res, err := tx.Run(ctx, readSchema, map[string]any{"names": append(want, legacyTextIndex, legacyEntityKey)})
		if err != nil {
			return answer{}, err
		}
		rows, err := res.Collect(ctx)
		if err != nil {
			return answer{}, err
		}
		sum, err := res.Consume(ctx)
		if err != nil {
			return answer{}, err
		}
		return answer{rows: rows, db: sum.Database().Name()}, nil
	})
	if err != nil {
		return fail(wrap("read schema on "+hostPort, err))
	}
	if a.db == "" {
		return fail(wrap("resolve database on "+hostPort, errors.New("server did not name the database")))
	}
	g.database = a.db
	g.identity = "neo4j:" + hostPort + "/" + a.db
	if err := schemaReady(a.rows, want); err != nil {
		return fail(fmt.Errorf("neo4j: open %s read-only: %w: %w", g.identity, err, ErrNotReadable))
	}
	if g.emb != nil {
		// Without a vector index made for this embedder (no writer with
		// it has opened the graph yet), search is lexical only.
		index, err := g.readRow(ctx, vectorIndexOptions, map[string]any{"name": IndexMemoryEmbedding})
		if err != nil {
			return fail(wrap("read vector index on "+hostPort, err))
		}
		dim, _ := index["dim"].(int64)
		if quantized, _ := index["quantized"].(bool); index == nil || dim != int64(g.emb.Dim()) || quantized {
			g.emb = nil
		}
	}
	return g, nil
}

// schemaReady says what, if anything, keeps rows (readSchema's) from
// being the schema Open makes: every name in want online, the fulltext
// index of the current options, no fulltext index of an earlier version.
func schemaReady(rows []*neo4jdrv.Record, want []string) error {
	found := map[string]bool{}
	for _, r := range rows {
		name, _ := r.Values[0].(string)
		state, _ := r.Values[1].(string)
		current, _ := r.Values[2].(bool)
		switch {
		case name == legacyTextIndex:
			return fmt.Errorf("fulltext index %s of an earlier version", name)
		case name == legacyEntityKey:
			return fmt.Errorf("constraint %s of an earlier version", name)
		case state != "ONLINE":
			return fmt.Errorf("index %s is %s", name, state)
		case name == IndexMemoryText && !current:
			return fmt.Errorf("fulltext index %s has other options", name)
		}
		found[name] = true
	}
	for _, n := range want {
		if !found[n] {
			return fmt.Errorf("index %s is missing", n)
		}
	}
	return nil
}
