package memsync

// Embedder turns text into a unit-length vector; safe for concurrent use.
type Embedder interface {
	Embed(text string) []float32 // len == Dim(), L2-normalised; zero vector for text with no known token
	Dim() int
	Version() string // changes whenever the vectors would (model bytes hash + pooling)
}

// Embeds reports whether e is a configured embedder: a nil Embedder means
// lexical recall only.
func Embeds(e Embedder) bool { return e != nil && e.Dim() > 0 }

// QueryVector embeds text for a vector search: nil when e is not
// configured or when text holds no token the model knows (its vector is
// zero), so that the search is lexical only.
func QueryVector(e Embedder, text string) []float32 {
	if !Embeds(e) {
		return nil
	}
	v := e.Embed(text)
	for _, x := range v {
		if x != 0 {
			return v
		}
	}
	return nil
}

// VectorGraph is a Graph that stores a vector per memory, made by the
// embedder it returns (nil: none). The engine embeds the records it reads
// for such a graph on its reader goroutine (Memory.Embed), where the work
// overlaps the graph's write of the batch before instead of adding to it.
type VectorGraph interface {
	Embedder() Embedder
}

// graphEmbedder is g's embedder when g stores vectors, else nil.
func graphEmbedder(g Graph) Embedder {
	if v, ok := g.(VectorGraph); ok && Embeds(v.Embedder()) {
		return v.Embedder()
	}
	return nil
}
