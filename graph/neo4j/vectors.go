package neo4j

import (
	"context"
	"fmt"
	"strconv"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"go.uber.org/zap"

	"github.com/memsync/memsync/memsync/recall"
)

// Vectors (issue 27). With Config.Embedder, every memory written gets an
// embedding property (the embedder's vector) and embedding_version (its
// Version), and Neo4j's native vector index IndexMemoryEmbedding (cosine)
// serves the vector half of Search. Search keeps only nodes of the
// current version, of the reader's groups and filters, inside the same
// query as the index lookup, so a new model's search never reads an old
// model's vectors (never a mixed index). One :MemsyncVectors node holds
// the version and dimension the graph was last embedded with; Open
// compares it with the embedder's and, when they differ, recreates the
// index for the new dimension and re-embeds every memory in the
// background (Reembed; a rebuild re-embeds anyway).
const (
	// IndexMemoryEmbedding is the vector index on :Memory(embedding).
	IndexMemoryEmbedding = "memsync_memory_embedding"
	vectorsKey           = "vectors"
	vectorsStateQuery    = `MATCH (v:MemsyncVectors {key: $key}) RETURN v.version AS version, v.dim AS dim`
	setVectorsQuery      = `MERGE (v:MemsyncVectors {key: $key}) SET v.version = $version, v.dim = $dim`
	dropVectorIndex      = "DROP INDEX " + IndexMemoryEmbedding + " IF EXISTS"
	vectorIndexOptions   = `SHOW VECTOR INDEXES YIELD name, options WHERE name = $name
RETURN options.indexConfig['vector.dimensions'] AS dim, coalesce(options.indexConfig['vector.quantization.enabled'], false) AS quantized`
	// vectorSearchQuery asks the vector index for its $k nearest and
	// keeps, in one row, how many it gave and those the reader may see,
	// each with its exact similarity (the index's score is approximate).
	vectorSearchQuery = `
CALL db.index.vector.queryNodes($vindex, $k, $vector) YIELD node
WITH count(*) AS n,
  collect(CASE WHEN node.hash IS NOT NULL
      AND node.embedding_version = $version
      AND node.group_id IN $groups
      AND ($all OR node.invalid_at IS NULL)
      AND (size($kinds) = 0 OR node.kind IN $kinds)
      AND ($since IS NULL OR node.ts >= $since)
    THEN [node.uuid, vector.similarity.cosine(node.embedding, $vector), node.ts] END) AS hits
RETURN n, hits`
	staleQuery = `MATCH (m:Memory) WHERE m.hash IS NOT NULL AND (m.embedding_version IS NULL OR m.embedding_version <> $version)
RETURN m.uuid AS uuid, m.text AS text LIMIT $limit`
	setEmbeddingQuery = `UNWIND $rows AS r MATCH (m:Memory {uuid: r.uuid}) WHERE m.hash = r.hash OR r.hash IS NULL
SET m.embedding = r.vec, m.embedding_version = $version`
)

// createVectorIndex is the vector index's statement for dim dimensions.
// Neo4j takes no parameter in a schema command's OPTIONS; dim is an
// integer from the embedder, never text from a user.
func createVectorIndex(dim int) string {
	return "CREATE VECTOR INDEX " + IndexMemoryEmbedding + " IF NOT EXISTS FOR (m:Memory) ON m.embedding" +
		" OPTIONS {indexConfig: {`vector.dimensions`: " + strconv.Itoa(dim) + ", `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}}"
}

// vectorProps sets a memory's embedding properties.
func (g *Graph) vectorProps(props map[string]any, text string) {
	if g.emb == nil {
		return
	}
	props["embedding"] = toFloat64s(g.emb.Embed(text))
	props["embedding_version"] = g.emb.Version()
}

func toFloat64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// openVectors makes the vector index match the embedder and starts
// re-embedding when the model changed.
func (g *Graph) openVectors(ctx context.Context) error {
	if g.emb == nil {
		return nil
	}
	state, err := g.readRow(ctx, vectorsStateQuery, map[string]any{"key": vectorsKey})
	if err != nil {
		return fmt.Errorf("read vector state: %w", err)
	}
	version, dim := g.emb.Version(), int64(g.emb.Dim())
	oldDim, _ := state["dim"].(int64)
	// Each slot's index is checked (generation.go): an index for another
	// dimension, or quantised (approximate scores), is made again in both.
	stale := false
	for _, name := range []string{IndexMemoryEmbedding, rewriteForSlotOne(IndexMemoryEmbedding)} {
		index, err := g.readRow(ctx, vectorIndexOptions, map[string]any{"name": name})
		if err != nil {
			return fmt.Errorf("read vector index %s: %w", name, err)
		}
		if index == nil {
			continue
		}
		idim, _ := index["dim"].(int64)
		if quantized, _ := index["quantized"].(bool); idim != dim || quantized {
			stale = true
		}
	}
	if stale {
		for _, slot := range []int{0, 1} { // generation.go
			if err := g.writeSlot(ctx, slot, dropVectorIndex, nil); err != nil {
				return fmt.Errorf("drop vector index: %w", err)
			}
		}
	}
	for _, slot := range []int{0, 1} { // each generation's slot has its index (generation.go)
		if err := g.writeSlot(ctx, slot, createVectorIndex(int(dim)), nil); err != nil && !isEquivalentSchema(err) {
			return fmt.Errorf("create vector index: %w", err)
		}
	}
	if err := g.awaitIndexes(ctx); err != nil {
		return err
	}
	if v, _ := state["version"].(string); v != version || oldDim != dim {
		if err := g.write(ctx, setVectorsQuery, map[string]any{"key": vectorsKey, "version": version, "dim": dim}); err != nil {
			return fmt.Errorf("record vector version: %w", err)
		}
	}
	rctx, cancel := context.WithCancel(context.Background())
	g.reembedStop, g.reembedDone = cancel, make(chan struct{})
	go func() {
		defer close(g.reembedDone)
		if err := g.Reembed(rctx); err != nil && rctx.Err() == nil {
			g.reembedError = err
			g.lg.Warn("neo4j graph: re-embed", zap.Error(err))
		}
	}()
	return nil
}

// readRow runs a read query and returns its first row as a map (nil if none).
func (g *Graph) readRow(ctx context.Context, query string, params map[string]any) (map[string]any, error) {
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	return neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) (map[string]any, error) {
		res, err := tx.Run(ctx, query, params)
		if err != nil {
			return nil, err
		}
		if !res.Next(ctx) {
			return nil, res.Err()
		}
		return res.Record().AsMap(), nil
	})
}

func (g *Graph) awaitIndexes(ctx context.Context) error {
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

// reembedChunk is how many memories one re-embedding transaction takes.
const reembedChunk = 500

// Reembed gives every memory without an embedding of the embedder's
// version one, chunk by chunk. Open runs it in the background; Flush waits
// for it.
func (g *Graph) Reembed(ctx context.Context) error {
	if g.emb == nil {
		return nil
	}
	version := g.emb.Version()
	total := 0
	start := time.Now()
	for {
		s := g.session(ctx, neo4jdrv.AccessModeWrite)
		n, err := neo4jdrv.ExecuteWrite(ctx, s, func(tx neo4jdrv.ManagedTransaction) (int, error) {
			res, err := tx.Run(ctx, staleQuery, map[string]any{"version": version, "limit": int64(reembedChunk)})
			if err != nil {
				return 0, err
			}
			recs, err := res.Collect(ctx)
			if err != nil {
				return 0, err
			}
			rows := make([]map[string]any, 0, len(recs))
			for _, r := range recs {
				m := r.AsMap()
				text, _ := m["text"].(string)
				rows = append(rows, map[string]any{"uuid": m["uuid"], "hash": nil, "vec": toFloat64s(g.emb.Embed(text))})
			}
			if len(rows) == 0 {
				return 0, nil
			}
			return len(rows), run(ctx, tx, setEmbeddingQuery, map[string]any{"rows": rows, "version": version})
		})
		s.Close(ctx)
		if err != nil {
			return wrap("re-embed", err)
		}
		total += n
		if n == 0 {
			break
		}
	}
	if total > 0 {
		g.lg.Info("neo4j graph: re-embedded memories", zap.Int("memories", total),
			zap.String("version", version), zap.Duration("took", time.Since(start)))
	}
	return nil
}

// Flush returns once the background re-embedding Open started is over,
// with its error.
func (g *Graph) Flush(ctx context.Context) error {
	if g.reembedDone == nil {
		return nil
	}
	select {
	case <-g.reembedDone:
		return g.reembedError
	case <-ctx.Done():
		return fmt.Errorf("neo4j: flush: %w", ctx.Err())
	}
}

// similar returns the pool memories most similar to qv among those params
// (the search's filters) let through, best first. The index is asked for
// more neighbours until the filtered answer fills the pool or the index
// has no more to give.
func (g *Graph) similar(ctx context.Context, s neo4jdrv.SessionWithContext, qv []float32, params map[string]any, pool int) ([]recall.Similar, error) {
	p := make(map[string]any, len(params)+4)
	for k, v := range params {
		p[k] = v
	}
	p["vindex"], p["vector"], p["version"] = IndexMemoryEmbedding, toFloat64s(qv), g.emb.Version()
	for k := 4 * pool; ; k *= 8 {
		p["k"] = int64(k)
		type answer struct {
			n    int64
			hits []recall.Similar
		}
		a, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) (answer, error) {
			res, err := tx.Run(ctx, vectorSearchQuery, p)
			if err != nil {
				return answer{}, err
			}
			rec, err := res.Single(ctx)
			if err != nil {
				return answer{}, err
			}
			var a answer
			n, _ := rec.Get("n")
			a.n, _ = n.(int64)
			hs, _ := rec.Get("hits")
			list, _ := hs.([]any)
			for _, h := range list {
				row, ok := h.([]any)
				if !ok || len(row) != 3 {
					continue
				}
				uuid, _ := row[0].(string)
				score, _ := row[1].(float64)
				ts, _ := row[2].(time.Time)
				// Neo4j scores cosine as (1 + cos) / 2.
				a.hits = append(a.hits, recall.Similar{UUID: uuid, TS: ts.UTC(), Cosine: recall.RoundCosine(2*score - 1)})
			}
			return a, nil
		})
		if err != nil {
			return nil, wrap("vector search", err)
		}
		if len(a.hits) >= pool || a.n < int64(k) {
			recall.OrderSimilar(a.hits)
			return a.hits[:min(pool, len(a.hits))], nil
		}
	}
}
