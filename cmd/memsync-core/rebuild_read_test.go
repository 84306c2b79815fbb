package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
)

// TestSearchDuringRebuild is issue 51 §4: searches run while `memsync
// rebuild` rebuilds a few thousand records. Every answer holds the memory
// that was there before, or says it is offline (the embedded store being
// rebuilt answers from the journals); none answers online without it.
// Neo4j answers from its current slot, online, throughout.
func TestSearchDuringRebuild(t *testing.T) {
	for _, backend := range []string{"embedded", "neo4j"} {
		t.Run(backend, func(t *testing.T) {
			iv := invocation{env: map[string]string{"MEMSYNC_GRAPH": backend}}
			env := append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH="+backend)
			if backend == "neo4j" {
				neo4jtest.Open(t) // an empty graph, and the server to this test alone
				for _, k := range []string{"MEMSYNC_NEO4J_URI", "MEMSYNC_NEO4J_USER", "MEMSYNC_NEO4J_PASSWORD", "MEMSYNC_NEO4J_DATABASE"} {
					iv.env[k] = os.Getenv(k)
				}
			}
			repo := ledgerRepo(t)
			old := ledgerAppend(t, repo, journal.Record{TS: t0, Agent: "a", Scope: journal.ScopeShared, Text: "the zebrafish quorum decides the release"})
			for i := range 4000 {
				ledgerAppend(t, repo, journal.Record{TS: t0.Add(time.Duration(i+1) * time.Second), Agent: []string{"a", "b"}[i%2],
					Scope: journal.ScopeShared, Text: fmt.Sprintf("routine note %d on build %d and deploy %d", i, i%97, i%89)})
			}
			if r := iv.run(t, "sync", "--once", "--repo", repo); r.code != 0 {
				t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			search := func() searchResult {
				return decodeSearch(t, iv.run(t, "search", "zebrafish", "quorum", "--agent", "b", "--json", "--repo", repo))
			}
			if res := search(); res.Offline || len(res.Results) == 0 || res.Results[0].UUID != old {
				t.Fatalf("before the rebuild: %+v", res)
			}

			for round := range 3 {
				rebuild := exec.Command(memsyncBinary(t), "rebuild", "--yes", "--repo", repo)
				rebuild.Env = env
				var out strings.Builder
				rebuild.Stdout, rebuild.Stderr = &out, &out
				if err := rebuild.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- rebuild.Wait() }()
				var mu sync.Mutex
				var calls, offline, wrong int
				var firstWrong string
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for range 3 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							select {
							case <-stop:
								return
							default:
							}
							res := search()
							found := false
							for _, h := range res.Results {
								found = found || h.UUID == old
							}
							mu.Lock()
							calls++
							if res.Offline {
								offline++
							}
							if !found && !res.Offline {
								wrong++
								if firstWrong == "" {
									b, _ := json.Marshal(res)
									firstWrong = string(b)
								}
							}
							mu.Unlock()
						}
					}()
				}
				err := <-done
				close(stop)
				wg.Wait()
				if err != nil {
					t.Fatalf("rebuild: %v\n%s", err, out.String())
				}
				t.Logf("round %d: %d searches during the rebuild, %d offline, %d online without the memory", round, calls, offline, wrong)
				if wrong > 0 {
					t.Fatalf("round %d: %d of %d searches during the rebuild answered online without %s; the first: %s", round, wrong, calls, old, firstWrong)
				}
				if backend == "neo4j" && offline > 0 {
					t.Errorf("round %d: %d of %d searches went offline: Neo4j's current slot answers during a rebuild", round, offline, calls)
				}
			}
			if res := search(); res.Offline || len(res.Results) == 0 || res.Results[0].UUID != old {
				t.Fatalf("after the rebuild: %+v", res)
			}
		})
	}
}
