package neo4j

// HoldsTerm and PaddedTerms are holdsTerm and paddedTerms, for the test
// that runs the predicate on the server.
var (
	HoldsTerm   = holdsTerm
	PaddedTerms = paddedTerms
)
