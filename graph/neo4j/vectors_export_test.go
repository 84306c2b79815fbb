package neo4j

import "context"

// CountEmbeddings counts the memories embedded by version (tests only).
func (g *Graph) CountEmbeddings(ctx context.Context, version string) (int, error) {
	row, err := g.readRow(ctx, `MATCH (m:Memory) WHERE m.embedding_version = $v RETURN count(m) AS n`, map[string]any{"v": version})
	if err != nil {
		return 0, err
	}
	n, _ := row["n"].(int64)
	return int(n), nil
}

// SetEmbeddingVersion marks a memory's vector as made by version (tests only).
func (g *Graph) SetEmbeddingVersion(ctx context.Context, uuid, version string) error {
	return g.write(ctx, `MATCH (m:Memory {uuid: $uuid}) SET m.embedding_version = $v`, map[string]any{"uuid": uuid, "v": version})
}

// DropSlotVectorIndex drops slot's vector index alone (tests only).
func (g *Graph) DropSlotVectorIndex(ctx context.Context, slot int) error {
	return g.writeSlot(ctx, slot, dropVectorIndex, nil)
}

// VectorIndexDims is the dimensions of each slot's vector index, 0 when
// it has none (tests only).
func (g *Graph) VectorIndexDims(ctx context.Context) ([2]int64, error) {
	var dims [2]int64
	for slot, name := range []string{IndexMemoryEmbedding, rewriteForSlotOne(IndexMemoryEmbedding)} {
		row, err := g.readRow(ctx, vectorIndexOptions, map[string]any{"name": name})
		if err != nil {
			return dims, err
		}
		if row != nil {
			dims[slot], _ = row["dim"].(int64)
		}
	}
	return dims, nil
}
