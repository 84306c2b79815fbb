package embedded

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/memsync/memsync/memsync"
)

// prepareChunk is how many records a preparing goroutine takes at a time.
const prepareChunk = 256

// preparer derives the rows of a batch chunk by chunk, on up to
// GOMAXPROCS-1 goroutines (the writer keeps a core to itself), while the
// writer stores the chunks already done. Chunks are handed out in order;
// when the writer needs a chunk nobody has started (the first of a batch,
// or whenever preparing falls behind) it prepares that chunk itself rather
// than wait. Its goroutines end before stop returns.
type preparer struct {
	emb    memsync.Embedder // nil: no vectors
	batch  []memsync.Memory
	chunks []prepared
	next   atomic.Int64 // next chunk to hand out
	quit   atomic.Bool
	wg     sync.WaitGroup
}

type prepared struct {
	claimed atomic.Bool // someone prepares it, or did
	done    chan struct{}
	rows    []row
	err     error // the first *memsync.RecordError of the chunk
}

func startPreparing(batch []memsync.Memory, emb memsync.Embedder) *preparer {
	n := (len(batch) + prepareChunk - 1) / prepareChunk
	p := &preparer{emb: emb, batch: batch, chunks: make([]prepared, n)}
	for i := range p.chunks {
		p.chunks[i].done = make(chan struct{})
	}
	workers := min(max(1, runtime.GOMAXPROCS(0)-1), n)
	if n == 1 {
		// One chunk: nothing to overlap with, so no goroutine either.
		p.work()
		return p
	}
	p.wg.Add(workers)
	for i := 0; i < workers; i++ {
		go func() {
			defer p.wg.Done()
			p.work()
		}()
	}
	return p
}

func (p *preparer) work() {
	for !p.quit.Load() {
		i := int(p.next.Add(1) - 1)
		if i >= len(p.chunks) {
			return
		}
		if p.chunks[i].claimed.CompareAndSwap(false, true) {
			p.prepare(i)
		}
	}
}

// prepare derives the rows of chunk i, which the caller has claimed.
func (p *preparer) prepare(i int) {
	c := &p.chunks[i]
	part := p.batch[i*prepareChunk : min((i+1)*prepareChunk, len(p.batch))]
	c.rows = make([]row, 0, len(part))
	// The chunk's stored vectors share one allocation (the driver copies
	// each when it binds it), not one each.
	var vecs []byte
	var version any // boxed once, not once a row
	if p.emb != nil {
		vecs = make([]byte, 0, len(part)*(4+p.emb.Dim()))
		version = p.emb.Version()
	}
	for j := range part {
		r, err := prepareRow(&part[j])
		if err != nil {
			c.err = err
			break
		}
		if p.emb != nil {
			n := len(vecs)
			vecs = appendVector(vecs, r.m.Vector(p.emb))
			r.vec, r.version = vecs[n:len(vecs):len(vecs)], version
		}
		c.rows = append(c.rows, r)
	}
	close(c.done)
}

// wait returns the rows of chunk i once they are ready, preparing them on
// the caller's goroutine when no one has started yet.
func (p *preparer) wait(ctx context.Context, i int) ([]row, error) {
	c := &p.chunks[i]
	if c.claimed.CompareAndSwap(false, true) {
		p.prepare(i)
	}
	select {
	case <-c.done:
		return c.rows, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stop makes the goroutines give up the chunks not started yet and waits
// for them to finish.
func (p *preparer) stop() {
	p.quit.Store(true)
	p.wg.Wait()
}
