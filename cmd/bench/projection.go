package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, as graph/embedded uses it

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/memsync"
)

// engineBatch is the engine's batch size (memsync.Options.BatchSize and
// daemon.batch_size default to it).
const engineBatch = 1000

// rebuildPath projects the journals of repo (want records) into g the way
// `memsync rebuild` does, with memsync.Engine.Rebuild, and returns records/s.
func rebuildPath(ctx context.Context, g memsync.Graph, repo string, want int) (float64, error) {
	eng, err := memsync.New(memsync.Options{Root: repo, Graph: g, BatchSize: engineBatch})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	rep, err := eng.Rebuild(ctx, nil)
	elapsed := time.Since(start)
	if err != nil {
		return 0, err
	}
	if rep.Projected != want || rep.Rejected != 0 {
		return 0, fmt.Errorf("rebuild projected %d records and rejected %d, want %d and 0", rep.Projected, rep.Rejected, want)
	}
	return float64(want) / elapsed.Seconds(), nil
}

// applyRate projects mems into g with Graph.Apply, batch records per call,
// and returns records/s.
func applyRate(ctx context.Context, g memsync.Graph, mems []memsync.Memory, batch int) (float64, error) {
	start := time.Now()
	for i := 0; i < len(mems); i += batch {
		res, err := g.Apply(ctx, mems[i:min(i+batch, len(mems))])
		if err != nil {
			return 0, fmt.Errorf("apply records %d..: %w", i, err)
		}
		if len(res.Mismatched) > 0 {
			return 0, fmt.Errorf("apply records %d..: %d mismatched uuids", i, len(res.Mismatched))
		}
	}
	// Until the embedded store's indexer has caught up, the records are
	// stored but not all searchable: that is part of the projection.
	if f, ok := g.(memsync.Flusher); ok {
		if err := f.Flush(ctx); err != nil {
			return 0, err
		}
	}
	elapsed := time.Since(start)
	st, err := g.Stats(ctx)
	if err != nil {
		return 0, err
	}
	if st.Memories != len(mems) {
		return 0, fmt.Errorf("graph holds %d memories after applying %d", st.Memories, len(mems))
	}
	return float64(len(mems)) / elapsed.Seconds(), nil
}

// ceilingRow is a memory as the ceiling stores it: the columns memsync
// stores for it, computed before the clock starts.
type ceilingRow struct {
	uuid, ts, agent, group, scope, kind, text, path string
	line                                            int64
	hash, record                                    string
}

func ceilingRows(mems []memsync.Memory) []ceilingRow {
	out := make([]ceilingRow, len(mems))
	for i := range mems {
		m := &mems[i]
		out[i] = ceilingRow{uuid: m.UUID, ts: m.TS.UTC().Format("2006-01-02T15:04:05.000000000Z"), agent: m.Agent,
			group: m.GroupID(), scope: string(m.Scope), kind: string(m.Kind), text: m.Text, path: m.Path,
			line: int64(m.Line), hash: m.Hash(), record: string(m.Canonical())}
	}
	return out
}

// sqliteCeiling inserts rows into a bare table (no keys, no indexes, no
// full-text index) of a new SQLite database in dir, with pageSize pages and
// graph/embedded's durability settings (WAL, synchronous NORMAL), one
// prepared INSERT per row and one transaction per batch, and returns
// rows/s. The ceiling is measured at graph/embedded's page size
// (embedded.PageSize): a larger page makes the engine itself faster (at
// 16 KiB the ceiling rose by about a third over 4 KiB), so a ceiling at
// another size than memsync's would flatter or wrong the ratio.
func sqliteCeiling(ctx context.Context, dir string, rows []ceilingRow, batch, pageSize int) (float64, error) {
	path := filepath.Join(dir, "ceiling.db")
	defer os.Remove(path)
	defer os.Remove(path + "-wal")
	defer os.Remove(path + "-shm")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// In this order: WAL mode fixes the page size.
	for _, q := range []string{"PRAGMA page_size=" + strconv.Itoa(pageSize), "PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return 0, fmt.Errorf("ceiling: %s: %w", q, err)
		}
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE memories (uuid TEXT, ts TEXT, agent TEXT, group_id TEXT,
		scope TEXT, kind TEXT, text TEXT, path TEXT, line INTEGER, hash TEXT, record TEXT)`); err != nil {
		return 0, err
	}
	return timedInserts(ctx, db, `INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, rows, batch,
		func(r *ceilingRow) []any {
			return []any{r.uuid, r.ts, r.agent, r.group, r.scope, r.kind, r.text, r.path, r.line, r.hash, r.record}
		})
}

// timedInserts runs the prepared query once per row (its arguments from
// args), batch rows per transaction, and returns rows/s.
func timedInserts(ctx context.Context, db *sql.DB, query string, rows []ceilingRow, batch int, args func(*ceilingRow) []any) (float64, error) {
	ins, err := db.PrepareContext(ctx, query)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	start := time.Now()
	for i := 0; i < len(rows); i += batch {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		st := tx.StmtContext(ctx, ins)
		for j := i; j < min(i+batch, len(rows)); j++ {
			if _, err := st.ExecContext(ctx, args(&rows[j])...); err != nil {
				tx.Rollback()
				return 0, err
			}
		}
		if err := tx.Commit(); err != nil {
			return 0, err
		}
	}
	return float64(len(rows)) / time.Since(start).Seconds(), nil
}

// ceilingLabel is the label of the ceiling's nodes: no constraint or index
// of memsync's covers it.
const ceilingLabel = "BenchCeiling"

// neo4jRows are the rows as property maps, as graph/neo4j writes a Memory's
// properties.
func neo4jRows(rows []ceilingRow, mems []memsync.Memory) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		m := &mems[i]
		props := map[string]any{"uuid": r.uuid, "ts": m.TS.UTC(), "valid_at": m.TS.UTC(), "agent": r.agent,
			"scope": r.scope, "group_id": r.group, "kind": r.kind, "text": r.text, "path": r.path, "line": r.line,
			"importance": 0.5, "hash": r.hash, "record": r.record}
		for k, v := range map[string]string{"confidence": m.Confidence, "max_age": m.MaxAge, "tier": m.Tier,
			"session": m.Session, "task": m.Task, "why": m.Why} {
			if v != "" {
				props[k] = v
			}
		}
		if m.Source != nil {
			for k, v := range map[string]string{"source_type": m.Source.Type, "source_actor": m.Source.Actor} {
				if v != "" {
					props[k] = v
				}
			}
		}
		if len(m.Tags) > 0 {
			props["tags"] = m.Tags
		}
		if kw := strings.TrimSpace(strings.Join(append(slices.Clone(m.Tags), m.Entities...), " ")); kw != "" {
			props["keywords"] = kw
		}
		out[i] = props
	}
	return out
}

// neo4jCeiling creates one node per row with a plain UNWIND … CREATE, one
// transaction per batch, into a label nothing constrains or indexes, and
// returns rows/s. Its nodes are deleted before and after.
func neo4jCeiling(ctx context.Context, s *neo4jServer, rows []any, batch int) (float64, error) {
	if err := s.deleteCeiling(ctx); err != nil {
		return 0, err
	}
	defer s.deleteCeiling(context.WithoutCancel(ctx))
	sess := s.drv.NewSession(ctx, neo4jdrv.SessionConfig{DatabaseName: s.cfg.Database, AccessMode: neo4jdrv.AccessModeWrite})
	defer sess.Close(ctx)
	const create = "UNWIND $rows AS r CREATE (m:" + ceilingLabel + ") SET m = r"
	start := time.Now()
	for i := 0; i < len(rows); i += batch {
		chunk := rows[i:min(i+batch, len(rows))]
		_, err := sess.ExecuteWrite(ctx, func(tx neo4jdrv.ManagedTransaction) (any, error) {
			res, err := tx.Run(ctx, create, map[string]any{"rows": chunk})
			if err != nil {
				return nil, err
			}
			return res.Consume(ctx)
		})
		if err != nil {
			return 0, unavailable(fmt.Errorf("ceiling rows %d..: %w", i, err))
		}
	}
	return float64(len(rows)) / time.Since(start).Seconds(), nil
}

// deleteCeiling deletes the ceiling's nodes.
func (s *neo4jServer) deleteCeiling(ctx context.Context) error {
	return s.deleteLabel(ctx, ceilingLabel)
}

// deleteLabel deletes every node with label, a bounded transaction at a
// time (managed, so a stale pooled connection is retried).
func (s *neo4jServer) deleteLabel(ctx context.Context, label string) error {
	sess := s.drv.NewSession(ctx, neo4jdrv.SessionConfig{DatabaseName: s.cfg.Database, AccessMode: neo4jdrv.AccessModeWrite})
	defer sess.Close(ctx)
	for {
		n, err := neo4jdrv.ExecuteWrite(ctx, sess, func(tx neo4jdrv.ManagedTransaction) (int64, error) {
			res, err := tx.Run(ctx, "MATCH (m:"+label+") WITH m LIMIT 10000 DETACH DELETE m RETURN count(*)", nil)
			if err != nil {
				return 0, err
			}
			rec, err := res.Single(ctx)
			if err != nil {
				return 0, err
			}
			n, _ := rec.Values[0].(int64)
			return n, nil
		})
		if err != nil {
			return unavailable(fmt.Errorf("delete %s nodes: %w", label, err))
		}
		if n < 10000 {
			return nil
		}
	}
}

// unavailable marks a driver error that means the server could not be
// reached as memsync.ErrUnavailable, as graph/neo4j does.
func unavailable(err error) error {
	if neo4jdrv.IsConnectivityError(err) || neo4jdrv.IsRetryable(err) {
		return fmt.Errorf("%w: %w", memsync.ErrUnavailable, err)
	}
	return err
}

// warmUp loads the first records of the projection corpus once, unmeasured
// (the JVM's JIT on Neo4j, caches on both), and runs the ceiling's statement.
// In quick mode an unreachable Neo4j makes the column n/a.
func (b *bench) warmUp(ctx context.Context, c *column) error {
	o := b.opts
	name := c.b.name
	if err := b.projectionCorpus(); err != nil {
		return err
	}
	warm := b.projMems[:min(len(b.projMems), map[bool]int{false: 5000, true: 1000}[o.quick])]
	err := c.b.exclusive(ctx, func() error {
		g, release, err := c.b.fresh(ctx)
		if err != nil {
			return err
		}
		defer release()
		m := b.startMeter(c)
		if err := loadCorpus(ctx, g, warm); err != nil {
			return err
		}
		if c.b.neo != nil {
			if _, err := neo4jCeiling(ctx, c.b.neo, neo4jRows(ceilingRows(warm), warm), engineBatch); err != nil {
				return err
			}
		}
		b.logf("%s warm-up: %d records applied, unmeasured (%s)", name, len(warm), m)
		return nil
	})
	if err != nil && o.quick && c.b.neo != nil && errors.Is(err, memsync.ErrUnavailable) {
		c.na = "server not reachable"
		b.logf("%s warm-up: %v: the column is n/a", name, err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s warm-up: %w", name, err)
	}
	return nil
}

// measureProjection measures the rebuild path and Graph.Apply alone.
func (b *bench) measureProjection(ctx context.Context, c *column) error {
	o := b.opts
	name := c.b.name
	b.each(ctx, c, "projection (rebuild path)", func(run int) error {
		g, release, err := c.b.fresh(ctx)
		if err != nil {
			return err
		}
		defer release()
		stop := func() {}
		if o.cpuProfile != "" && run == o.runs-1 {
			if stop, err = startCPUProfile(o.cpuProfile + "-" + c.b.graphFlag + ".pprof"); err != nil {
				return err
			}
		}
		m := b.startMeter(c)
		rate, err := rebuildPath(ctx, g, b.projRepo, o.records)
		stop()
		if err != nil {
			return err
		}
		split := c.noteCPU("projection, rebuild path", m)
		c.rebuildPath.add(rate)
		b.logf("%s projection (rebuild path) run %d: %s records/s (%s)", name, run+1, thousands(rate), split)
		return nil
	}, &c.rebuildPath)
	if o.cpuProfile != "" && c.rebuildPath.ok() {
		// One more run, not counted, under the wall-clock samplers (which
		// would distort a measured run and its CPU profile).
		err := c.b.exclusive(ctx, func() error {
			g, release, err := c.b.fresh(ctx)
			if err != nil {
				return err
			}
			defer release()
			stop := startWallProfiles(ctx, o.cpuProfile+"-"+c.b.graphFlag, c.b.neo)
			rate, err := rebuildPath(ctx, g, b.projRepo, o.records)
			stop()
			if err == nil {
				b.logf("%s projection (rebuild path) under the wall-clock samplers, not counted: %s records/s", name, thousands(rate))
			}
			return err
		})
		if err != nil {
			b.logf("%s wall-clock profile: %v", name, err)
		}
	}
	b.each(ctx, c, "projection (Apply)", func(run int) error {
		g, release, err := c.b.fresh(ctx)
		if err != nil {
			return err
		}
		defer release()
		m := b.startMeter(c)
		rate, err := applyRate(ctx, g, b.projMems, engineBatch)
		if err != nil {
			return err
		}
		c.apply.add(rate)
		b.logf("%s projection (Graph.Apply, batches of %d) run %d: %s records/s (%s)", name, engineBatch, run+1, thousands(rate),
			c.noteCPU("projection, Graph.Apply", m))
		return nil
	}, &c.apply)
	return nil
}

// measureNaive measures one transaction per record.
func (b *bench) measureNaive(ctx context.Context, c *column) error {
	o := b.opts
	name := c.b.name
	if err := b.projectionCorpus(); err != nil {
		return err
	}
	b.each(ctx, c, "naive baseline", func(run int) error {
		g, release, err := c.b.fresh(ctx)
		if err != nil {
			return err
		}
		defer release()
		m := b.startMeter(c)
		rate, err := applyRate(ctx, g, b.projMems[:o.naiveRecords], 1)
		if err != nil {
			return err
		}
		c.naive.add(rate)
		b.logf("%s naive baseline (one transaction per record) run %d: %s records/s (%s)", name, run+1, thousands(rate),
			c.noteCPU("naive baseline", m))
		return nil
	}, &c.naive)
	return nil
}

// measureCeiling measures plain inserts of the same rows into a bare store.
func (b *bench) measureCeiling(ctx context.Context, c *column) error {
	name := c.b.name
	if err := b.projectionCorpus(); err != nil {
		return err
	}
	rows := ceilingRows(b.projMems)
	var props, keyed []any
	if c.b.neo != nil {
		props = neo4jRows(rows, b.projMems)
		keyed = neo4jKeyedRows(props, b.projMems)
	}
	b.each(ctx, c, "engine ceiling", func(run int) error {
		var rate float64
		var err error
		m := b.startMeter(c)
		if c.b.neo != nil {
			rate, err = neo4jCeiling(ctx, c.b.neo, props, engineBatch)
		} else {
			rate, err = sqliteCeiling(ctx, b.tmp, rows, engineBatch, embedded.PageSize)
		}
		if err != nil {
			return err
		}
		c.ceiling.add(rate)
		b.logf("%s engine ceiling run %d: %s records/s (%s)", name, run+1, thousands(rate), c.noteCPU("engine ceiling", m))
		if c.b.neo != nil {
			rate, err = neo4jKeyedCeiling(ctx, c.b.neo, keyed, engineBatch)
		} else {
			rate, err = keyedCeiling(ctx, b.tmp, rows, engineBatch)
		}
		if err != nil {
			return err
		}
		c.keyedCeiling.add(rate)
		b.logf("%s engine ceiling with memsync's keys run %d: %s records/s", name, run+1, thousands(rate))
		if c.b.neo != nil {
			return nil // the 4 KiB diagnostic is SQLite's
		}
		if rate, err = sqliteCeiling(ctx, b.tmp, rows, engineBatch, 4096); err != nil {
			return err
		}
		c.ceiling4k.add(rate)
		b.logf("%s engine ceiling at 4 KiB pages run %d: %s records/s", name, run+1, thousands(rate))
		return nil
	}, &c.ceiling)
	return nil
}

// keyedCeiling is sqliteCeiling into the memories table of a new embedded
// store (its schema as graph/embedded creates it: the uuid key and the
// list indexes), with the same durability settings, statement and
// transactions: what the engine's ceiling is once the rows carry the keys
// every projection needs (a diagnostic beside the bare ceiling).
func keyedCeiling(ctx context.Context, dir string, rows []ceilingRow, batch int) (float64, error) {
	sub, err := os.MkdirTemp(dir, "keyed-ceiling-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(sub)
	g, err := embedded.Open(sub, nil)
	if err != nil {
		return 0, err
	}
	if err := g.Close(); err != nil {
		return 0, err
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(sub, embedded.FileName)+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	return timedInserts(ctx, db, `INSERT INTO memories (uuid, agent, group_id, scope, kind, ts, path, line, hash, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		rows, batch, func(r *ceilingRow) []any {
			return []any{r.uuid, r.agent, r.group, r.scope, r.kind, r.ts, r.path, r.line, r.hash, r.record}
		})
}
