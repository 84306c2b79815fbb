package embedded

import (
	"context"
	"database/sql"
	"sync/atomic"

	"go.uber.org/zap"
)

// checkpointEvery is how many bytes of rows the writer commits between two
// checkpoints the checkpointer runs (the WAL grows by a little more: index
// and interior pages). A variable for tests.
var checkpointEvery int64 = 48 << 20

// checkpointer copies the main file's WAL back into it on a connection
// and goroutine of its own, so that the writer, which is the projection's
// critical path, does not: SQLite's automatic checkpoint runs inside the
// COMMIT that crosses its threshold, and took about 2 of the writer's 14
// CPU-s in a 1M rebuild. A PASSIVE checkpoint waits for no one and no
// writer waits for it. The writer's own automatic checkpoint stays, at
// twice the distance, for when this one falls behind.
type checkpointer struct {
	db      *sql.DB
	lg      *zap.Logger
	pending atomic.Int64 // bytes committed since the last checkpoint began
	copied  atomic.Int64 // WAL frames its checkpoints copied into the file
	kick    chan struct{}
	done    chan struct{}
}

// startCheckpointer opens its connection to the database file at path.
func startCheckpointer(path string, lg *zap.Logger) (*checkpointer, error) {
	// synchronous(FULL): the checkpoint syncs the file as the writer would.
	db, err := sql.Open("sqlite", dsn(path, "synchronous(FULL)", "cache_size(-256)"))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	c := &checkpointer{db: db, lg: lg, kick: make(chan struct{}, 1), done: make(chan struct{})}
	go c.run()
	return c, nil
}

// committed tells the checkpointer that the writer committed n bytes of
// rows. A nil checkpointer (a store opened read-only) does nothing.
func (c *checkpointer) committed(n int64) {
	if c == nil || c.pending.Add(n) < checkpointEvery {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default: // one is asked for already
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	for range c.kick {
		c.pending.Store(0)
		var busy, log, copied int64
		err := c.db.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &copied)
		if err != nil {
			c.lg.Debug("embedded graph: background checkpoint", zap.Error(err))
			continue
		}
		c.copied.Add(copied)
	}
}

// close stops the checkpointer after the checkpoint it runs, if any.
func (c *checkpointer) close() error {
	close(c.kick)
	<-c.done
	return c.db.Close()
}
