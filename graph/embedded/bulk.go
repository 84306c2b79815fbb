package embedded

import (
	"context"
	"time"

	"github.com/memsync/memsync/memsync"
)

var _ memsync.BulkLoader = (*Graph)(nil)

// metaBulk is the meta key BeginBulk sets (to the time it began) and
// EndBulk deletes: a store that holds it is being rebuilt, or its rebuild
// was interrupted (the cursors then start every journal again: see
// memsync.BulkLoader).
const metaBulk = "bulk_load_since"

// metaRebuilt is the meta key EndBulk sets to the time the bulk load
// ended: a row written at every EndBulk, so its COMMIT always has a page to
// write and the WAL to fsync.
const metaRebuilt = "bulk_load_ended"

// BeginBulk starts a rebuild's bulk load: the write connection commits
// with synchronous=NORMAL, so a batch's COMMIT no longer waits for the
// WAL's fsync (the WAL is still fsynced before each checkpoint copies it
// back, so a power cut can cost only the last commits, never the file's
// consistency). A kill -9 loses nothing either way: the commits are in
// the WAL. The marker is committed first, with the usual fsync.
func (g *Graph) BeginBulk(ctx context.Context) error {
	return g.setBulk(ctx, true)
}

// EndBulk ends the bulk load: synchronous=FULL again, then the marker
// deleted and the end's time written in one COMMIT, whose fsync of the WAL
// (the whole file) makes every commit since BeginBulk durable. A write
// connection opened again meanwhile (the old one broke) has had FULL since
// it opened.
func (g *Graph) EndBulk(ctx context.Context) error {
	return g.setBulk(ctx, false)
}

// bulkBatchFactor is BulkBatchFactor: a rebuild writes 7 daemon batches
// per transaction. Larger writes mean fewer commits and full-text segments:
// when a factor (5) was first set, 1M records took 63 s in batches of
// 2,000 and 46 s in batches of 5,000; measured again for issue 30, 100k
// records through Engine.Rebuild ran at 46-53k records/s in batches of
// 1,000, 60-69k in batches of 6,000 and 60-72k in batches of 8,000. At 1M
// (`memsync rebuild`, with the engine reading one group ahead and the
// writer's 16 MiB cache) time falls and memory grows with the batch:
// 17.3-19.2 s at 224-232 MB in batches of 6,000, 17.6-17.9 s at 258-272 MB
// in 7,000, 16.3-17.4 s at 267-291 MB in 8,000, 16.4-16.8 s at 430-460 MB
// in 16,000. 7 leaves about a tenth of both budgets (20 s, 300 MB) free;
// the peak also grows with the records' size (these average 370 bytes a
// line). (Neo4j builds a new generation instead and is no BulkLoader; its
// rebuild was slower in larger batches.)
const bulkBatchFactor = 7

// BulkBatchFactor is how many of the engine's batches one Apply of a bulk
// load carries (memsync.BulkLoader).
func (g *Graph) BulkBatchFactor() int { return bulkBatchFactor }

func (g *Graph) setBulk(ctx context.Context, on bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	what := "end bulk load"
	if on {
		what = "begin bulk load"
	}
	w, err := g.writerLocked(ctx)
	if err != nil {
		return g.wrap(what, err)
	}
	if !on {
		if _, err := w.conn.ExecContext(ctx, `PRAGMA synchronous=FULL`); err != nil {
			return g.wrap(what, err)
		}
	}
	err = inTx(ctx, w.conn, func() error {
		if on {
			_, err := w.conn.ExecContext(ctx, sqlSetMeta, metaBulk, time.Now().UTC().Format(time.RFC3339Nano))
			return err
		}
		if _, err := w.conn.ExecContext(ctx, `DELETE FROM meta WHERE key = ?1`, metaBulk); err != nil {
			return err
		}
		_, err := w.conn.ExecContext(ctx, sqlSetMeta, metaRebuilt, time.Now().UTC().Format(time.RFC3339Nano))
		return err
	})
	if err == nil && on {
		_, err = w.conn.ExecContext(ctx, `PRAGMA synchronous=NORMAL`)
	}
	if err != nil {
		g.dropWriterIfBroken(err)
		return g.wrap(what, err)
	}
	return nil
}
