package cmdline

// The documents commands print with --json that another door reads: the
// MCP server runs explain and flag in-process and hands these on as its
// tools' structured content, so that one type says what both print.

// ExplainEvent is one event as explain --json prints it.
type ExplainEvent struct {
	UUID   string `json:"uuid"`
	TS     string `json:"ts"`
	Kind   string `json:"kind"`
	Effect string `json:"effect"`
}

// ExplainResult is the document explain --json prints (SPEC §5).
type ExplainResult struct {
	UUID       string         `json:"uuid"`
	Agent      string         `json:"agent"`
	Kind       string         `json:"kind"`
	TS         string         `json:"ts"`
	Text       string         `json:"text"`
	Importance float64        `json:"importance"`
	Confidence float64        `json:"confidence"`
	Status     string         `json:"status"`
	Tier       string         `json:"tier"`
	MaxAge     string         `json:"max_age"`
	ReplacedBy string         `json:"replaced_by,omitempty"`
	AsOf       string         `json:"as_of"`
	Offline    bool           `json:"offline"`
	Basis      []string       `json:"basis"`
	Events     []ExplainEvent `json:"events"`
}

// FlagResult is the document flag --json prints.
type FlagResult struct {
	UUID     string `json:"uuid"`
	Target   string `json:"target"`
	Feedback string `json:"feedback"`
	Path     string `json:"path"`
}
