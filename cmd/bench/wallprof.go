package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// wallProfiler samples every goroutine's stack at a fixed rate and counts,
// per sample, the innermost frame in memsync's own code together with the
// goroutine's state. Unlike a CPU profile it also sees time spent waiting —
// for a Neo4j round trip, say — and so says which statement the projection
// waits on.
type wallProfiler struct {
	every   time.Duration
	stop    chan struct{}
	done    sync.WaitGroup
	mu      sync.Mutex
	counts  map[string]int
	samples int
}

// modulePrefix marks memsync's own frames; the benchmark's are left out.
const modulePrefix = "github.com/memsync/memsync/"

func startWallProfile(every time.Duration) *wallProfiler {
	p := &wallProfiler{every: every, stop: make(chan struct{}), counts: map[string]int{}}
	p.done.Add(1)
	go p.loop()
	return p
}

func (p *wallProfiler) loop() {
	defer p.done.Done()
	buf := make([]byte, 1<<20)
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		n := runtime.Stack(buf, true)
		for n == len(buf) {
			buf = make([]byte, 2*len(buf))
			n = runtime.Stack(buf, true)
		}
		keys := stackKeys(buf[:n])
		p.mu.Lock()
		p.samples++
		for _, k := range keys {
			p.counts[k]++
		}
		p.mu.Unlock()
	}
}

// stackKeys returns, for each goroutine in a runtime.Stack dump that is in
// memsync's code, "[state] function (file:line) ← caller (file:line)" of its
// innermost memsync frame and that frame's caller (when it is memsync's).
func stackKeys(dump []byte) []string {
	var keys []string
	for _, g := range bytes.Split(dump, []byte("\n\n")) {
		lines := strings.Split(strings.TrimSpace(string(g)), "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[0], "goroutine ") {
			continue
		}
		state := lines[0]
		if i, j := strings.IndexByte(state, '['), strings.IndexByte(state, ']'); i >= 0 && j > i {
			state = state[i+1 : j]
			if k := strings.IndexByte(state, ','); k >= 0 { // "select, 2 minutes"
				state = state[:k]
			}
		}
		var frames []string
		for i := 1; i+1 < len(lines) && len(frames) < 2; i += 2 {
			fn := lines[i]
			if !strings.HasPrefix(fn, modulePrefix) || strings.HasPrefix(fn, modulePrefix+"cmd/bench") {
				if len(frames) > 0 {
					break // the caller of memsync's innermost frame is not memsync's
				}
				continue
			}
			if k := strings.LastIndexByte(fn, '('); k > 0 {
				fn = fn[:k]
			}
			loc := strings.TrimSpace(lines[i+1])
			if k := strings.LastIndexByte(loc, ' '); k > 0 {
				loc = loc[:k]
			}
			if k := strings.LastIndex(loc, "/"); k >= 0 {
				loc = loc[k+1:]
			}
			frames = append(frames, fmt.Sprintf("%s (%s)", strings.TrimPrefix(fn, modulePrefix), loc))
		}
		if len(frames) > 0 {
			keys = append(keys, "["+state+"] "+strings.Join(frames, " ← "))
		}
	}
	return keys
}

// finish stops sampling and writes the top entries: the share of samples in
// which some goroutine stood at each place.
func (p *wallProfiler) finish(w io.Writer, top int, what string) {
	close(p.stop)
	p.done.Wait()
	type entry struct {
		key string
		n   int
	}
	var es []entry
	for k, n := range p.counts {
		es = append(es, entry{k, n})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].n > es[j].n || es[i].n == es[j].n && es[i].key < es[j].key })
	fmt.Fprintf(w, "%d samples (every %s); share of samples with %s:\n", p.samples, p.every, what)
	for i, e := range es {
		if i == top {
			break
		}
		fmt.Fprintf(w, "%6.1f%%  %s\n", 100*float64(e.n)/float64(max(p.samples, 1)), e.key)
	}
}

// serverProfiler samples the Neo4j server's open transactions (SHOW
// TRANSACTIONS) at a fixed rate and counts what each is executing: the
// server-side view of where a projection's time goes, statement by
// statement. A transaction open with no query running is between
// statements (the client's turn) or committing.
type serverProfiler struct {
	wallProfiler
	s *neo4jServer
}

func startServerProfile(ctx context.Context, s *neo4jServer, every time.Duration) *serverProfiler {
	p := &serverProfiler{wallProfiler: wallProfiler{every: every, stop: make(chan struct{}), counts: map[string]int{}}, s: s}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
			res, err := neo4jdrv.ExecuteQuery(ctx, s.drv,
				"SHOW TRANSACTIONS YIELD currentQuery, status, clientAddress RETURN currentQuery, status",
				nil, neo4jdrv.EagerResultTransformer, neo4jdrv.ExecuteQueryWithDatabase(s.cfg.Database))
			if err != nil {
				continue
			}
			var keys []string
			for _, r := range res.Records {
				q, _ := r.Values[0].(string)
				status, _ := r.Values[1].(string)
				if strings.HasPrefix(q, "SHOW TRANSACTIONS") {
					continue
				}
				keys = append(keys, "["+status+"] "+queryKey(q))
			}
			p.mu.Lock()
			p.samples++
			for _, k := range keys {
				p.counts[k]++
			}
			p.mu.Unlock()
		}
	}()
	return p
}

// queryKey is a statement in one line, shortened: "UNWIND $rows AS r MATCH (m:Memory {uuid: r.uuid}) …".
func queryKey(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if q == "" {
		return "(no statement running: client's turn, or commit)"
	}
	if len(q) > 110 {
		q = q[:110] + "…"
	}
	return q
}
