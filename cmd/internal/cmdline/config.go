package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/memsync/memsync/journal"
)

// Config is memsync's configuration: DefaultConfig, then <repo>/memsync.yaml,
// then MEMSYNC_* environment variables, then flags. The Neo4j password is
// not a field: it comes only from $MEMSYNC_NEO4J_PASSWORD or
// neo4j.password_file (see Neo4jPassword) and never appears in String.
type Config struct {
	// Graph is the projection backend: "embedded" or "neo4j". Empty until
	// resolved: neo4j when a Neo4j URI is configured, else embedded.
	Graph string `yaml:"graph"`
	// Embedder is the model for vector recall (issue 27): "none" (lexical
	// only), "default" (the model built into the binary) or the path of a
	// model file. Empty means none.
	Embedder   string           `yaml:"embedder"`
	Neo4j      Neo4jConfig      `yaml:"neo4j"`
	Append     AppendConfig     `yaml:"append"`
	Daemon     DaemonConfig     `yaml:"daemon"`
	Compaction CompactionConfig `yaml:"compaction"`
	// Consolidation tunes the consolidation cycle (SPEC §10).
	Consolidation ConsolidationConfig `yaml:"consolidation"`
	Sync          SyncConfig          `yaml:"sync"`
	Log           LogConfig           `yaml:"log"`
	Hooks         HooksConfig         `yaml:"hooks"`

	password string // from $MEMSYNC_NEO4J_PASSWORD; never printed
}

// Neo4jConfig locates the Neo4j server.
type Neo4jConfig struct {
	URI          string `yaml:"uri"`
	User         string `yaml:"user"`
	Database     string `yaml:"database"`      // empty: the server's default database
	PasswordFile string `yaml:"password_file"` // first line is the password
	// Graphiti adds the Graphiti-shaped projection of the shared group
	// (docs/design/graphiti.md): graphiti-core's search, retrieve_episodes
	// and the Graphiti MCP server read memsync's memories.
	Graphiti bool `yaml:"graphiti"`
	// GraphitiPrivate also projects every agent's private group as
	// AGENT_<name>: any Graphiti client given that id reads it.
	GraphitiPrivate bool `yaml:"graphiti_private"`
}

// AppendConfig tunes memsync append.
type AppendConfig struct {
	FSync bool `yaml:"fsync"` // fsync every appended line
	// CreateAgents lets append create the journal of an agent that init
	// never created (as --new-agent does); off, a mistyped --agent is refused.
	CreateAgents bool `yaml:"create_agents"`
}

// DaemonConfig tunes memsync run and sync.
type DaemonConfig struct {
	BatchSize      int           `yaml:"batch_size"`      // records per graph write
	BatchWindow    time.Duration `yaml:"batch_window"`    // how long a batch may wait to fill
	PollInterval   time.Duration `yaml:"poll_interval"`   // fallback rescan when no file events arrive
	CommitInterval time.Duration `yaml:"commit_interval"` // git commit of journals; 0 disables
	// Metrics is where memsync run serves Prometheus /metrics and /healthz:
	// host:port, or a bare port (loopback); empty: off.
	Metrics string `yaml:"metrics"`
}

// HooksConfig tunes memsync hook.
type HooksConfig struct {
	// Agent is the agent a hook speaks for when neither --agent nor
	// $MEMSYNC_AGENT names one.
	Agent string `yaml:"agent"`
}

// CompactionConfig tunes memsync compact.
type CompactionConfig struct {
	MaxDayLines int    `yaml:"max_day_lines"` // a day file over this is compacted early
	Weekday     string `yaml:"weekday"`       // the weekly compaction day
	Summarizer  string `yaml:"summarizer"`    // command that summarizes; empty: built-in
}

// SyncConfig is the exchange with a git remote (SPEC §12; memsync run --remote).
type SyncConfig struct {
	Remote   string        `yaml:"remote"`   // git remote to pull from and push to; empty: no exchange
	Interval time.Duration `yaml:"interval"` // how often the daemon exchanges
}

// ConsolidationConfig tunes memsync consolidate in the daemon.
type ConsolidationConfig struct {
	Interval time.Duration `yaml:"interval"` // how often the daemon consolidates every agent; 0 disables
}

// LogConfig shapes the log on stderr.
type LogConfig struct {
	Format string `yaml:"format"` // auto (console on a terminal, else json), json, console
	Level  string `yaml:"level"`  // debug, info, warn, error
}

// The graph backends, as Config.Graph names them.
const (
	GraphEmbedded = "embedded"
	GraphNeo4j    = "neo4j"
)

// DefaultConfig is the configuration when nothing is set.
func DefaultConfig() Config {
	return Config{
		Neo4j:  Neo4jConfig{User: "neo4j"},
		Append: AppendConfig{FSync: true},
		Daemon: DaemonConfig{
			BatchSize:      1000,
			BatchWindow:    50 * time.Millisecond,
			PollInterval:   time.Second,
			CommitInterval: 5 * time.Minute,
		},
		Compaction:    CompactionConfig{MaxDayLines: 500, Weekday: "sunday"},
		Consolidation: ConsolidationConfig{Interval: 6 * time.Hour},
		Sync:          SyncConfig{Interval: time.Minute},
		Log:           LogConfig{Format: "auto", Level: "info"},
	}
}

// Errors of Validate and LoadConfig, wrapped with the value at fault.
var (
	errConfigFile      = errors.New("bad config file")
	errGraph           = errors.New("graph must be embedded or neo4j")
	errNeo4jURI        = errors.New("neo4j.uri must be neo4j://, neo4j+s://, neo4j+ssc://, bolt://, bolt+s:// or bolt+ssc://")
	errNeo4jURIMissing = errors.New("graph neo4j needs neo4j.uri (or MEMSYNC_NEO4J_URI, --neo4j-uri)")
	errBatchSize       = errors.New("daemon.batch_size must be at least 1")
	errDuration        = errors.New("must be a positive duration")
	errSyncInterval    = errors.New("sync.interval must not be negative")
	errCommitInterval  = errors.New("daemon.commit_interval must not be negative (0 disables)")
	errMaxDayLines     = errors.New("compaction.max_day_lines must be at least 1")
	errWeekday         = errors.New("compaction.weekday must be a day name (sunday ... saturday)")
	errLogFormat       = errors.New("log.format must be auto, json or console")
	errLogLevel        = errors.New("log.level must be debug, info, warn or error")
	errPassword        = errors.New("neo4j password")
	errMetrics         = errors.New("must be HOST:PORT or a bare port (served on 127.0.0.1)")
)

// errConsolidationInterval is consolidation.interval below zero.
var errConsolidationInterval = errors.New("consolidation.interval must not be negative (0 disables)")

// Validate checks every field and returns the first fault, wrapping one of
// the err* sentinels.
func (c *Config) Validate() error {
	switch c.Graph {
	case "", GraphEmbedded, GraphNeo4j:
	default:
		return fmt.Errorf("graph %q: %w", c.Graph, errGraph)
	}
	if c.Neo4j.URI != "" {
		u, err := url.Parse(c.Neo4j.URI)
		if err != nil || u.Host == "" {
			return fmt.Errorf("neo4j.uri %q: %w", redactURI(c.Neo4j.URI), errNeo4jURI)
		}
		switch u.Scheme {
		case "neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc":
		default:
			return fmt.Errorf("neo4j.uri %q: %w", redactURI(c.Neo4j.URI), errNeo4jURI)
		}
	}
	if c.Backend() == GraphNeo4j && c.Neo4j.URI == "" {
		return errNeo4jURIMissing
	}
	if c.Daemon.BatchSize < 1 {
		return fmt.Errorf("daemon.batch_size %d: %w", c.Daemon.BatchSize, errBatchSize)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"daemon.batch_window", c.Daemon.BatchWindow}, {"daemon.poll_interval", c.Daemon.PollInterval}} {
		if d.v <= 0 {
			return fmt.Errorf("%s %v: %w", d.name, d.v, errDuration)
		}
	}
	if c.Sync.Interval < 0 {
		return fmt.Errorf("sync.interval %v: %w", c.Sync.Interval, errSyncInterval)
	}
	if c.Daemon.CommitInterval < 0 {
		return fmt.Errorf("daemon.commit_interval %v: %w", c.Daemon.CommitInterval, errCommitInterval)
	}
	if c.Consolidation.Interval < 0 {
		return fmt.Errorf("consolidation.interval %v: %w", c.Consolidation.Interval, errConsolidationInterval)
	}
	if c.Daemon.Metrics != "" {
		if _, err := MetricsAddr(c.Daemon.Metrics); err != nil {
			return fmt.Errorf("daemon.metrics %q: %w", c.Daemon.Metrics, err)
		}
	}
	if c.Hooks.Agent != "" && !journal.ValidAgent(c.Hooks.Agent) {
		return fmt.Errorf("hooks.agent: %s", AgentNameError(c.Hooks.Agent))
	}
	if c.Compaction.MaxDayLines < 1 {
		return fmt.Errorf("compaction.max_day_lines %d: %w", c.Compaction.MaxDayLines, errMaxDayLines)
	}
	if _, ok := parseWeekday(c.Compaction.Weekday); !ok {
		return fmt.Errorf("compaction.weekday %q: %w", c.Compaction.Weekday, errWeekday)
	}
	switch c.Log.Format {
	case "auto", "json", "console":
	default:
		return fmt.Errorf("log.format %q: %w", c.Log.Format, errLogFormat)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log.level %q: %w", c.Log.Level, errLogLevel)
	}
	return nil
}

// Backend is the graph backend in effect: Graph, or the default it
// resolves to (GraphNeo4j when a Neo4j URI is configured, else
// GraphEmbedded).
func (c *Config) Backend() string {
	if c.Graph != "" {
		return c.Graph
	}
	if c.Neo4j.URI != "" {
		return GraphNeo4j
	}
	return GraphEmbedded
}

// MetricsAddr is the listen address of daemon.metrics (or --metrics):
// host:port as given, or a bare port on the loopback interface, so that
// metrics are never exposed beyond the host unless a host is named.
func MetricsAddr(s string) (string, error) {
	if port, err := strconv.Atoi(s); err == nil {
		if port < 0 || port > 65535 {
			return "", errMetrics
		}
		return "127.0.0.1:" + s, nil
	}
	// net.SplitHostPort would do, but the front binary must stay light.
	i := strings.LastIndex(s, ":")
	if i < 0 || strings.ContainsAny(s[:i], " /") {
		return "", errMetrics
	}
	if n, err := strconv.Atoi(s[i+1:]); err != nil || n < 0 || n > 65535 {
		return "", errMetrics
	}
	return s, nil
}

// CompactionWeekday is compaction.weekday as a time.Weekday.
func (c *Config) CompactionWeekday() time.Weekday {
	d, _ := parseWeekday(c.Compaction.Weekday)
	return d
}

func parseWeekday(s string) (time.Weekday, bool) {
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(s, d.String()) {
			return d, true
		}
	}
	return 0, false
}

// Neo4jPassword is the password for Neo4j: $MEMSYNC_NEO4J_PASSWORD, else
// the first line of neo4j.password_file, else empty. It is never logged.
func (c *Config) Neo4jPassword() (string, error) {
	if c.password != "" {
		return c.password, nil
	}
	if c.Neo4j.PasswordFile == "" {
		return "", nil
	}
	data, err := os.ReadFile(c.Neo4j.PasswordFile)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errPassword, err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSuffix(line, "\r"), nil
}

// String is the configuration in one log-safe line: no password, and no
// credentials embedded in the URI.
func (c Config) String() string {
	pw := "unset"
	if c.password != "" {
		pw = "from env"
	} else if c.Neo4j.PasswordFile != "" {
		pw = "from " + c.Neo4j.PasswordFile
	}
	return fmt.Sprintf("graph=%s neo4j.uri=%s neo4j.user=%s neo4j.database=%s neo4j.password=(%s) "+
		"append.fsync=%t daemon.batch_size=%d daemon.batch_window=%v daemon.poll_interval=%v "+
		"daemon.commit_interval=%v compaction.max_day_lines=%d compaction.weekday=%s "+
		"compaction.summarizer=%q consolidation.interval=%v sync.remote=%q sync.interval=%v log.format=%s log.level=%s daemon.metrics=%q hooks.agent=%q",
		c.Backend(), redactURI(c.Neo4j.URI), c.Neo4j.User, c.Neo4j.Database, pw,
		c.Append.FSync, c.Daemon.BatchSize, c.Daemon.BatchWindow, c.Daemon.PollInterval,
		c.Daemon.CommitInterval, c.Compaction.MaxDayLines, c.Compaction.Weekday,
		c.Compaction.Summarizer, c.Consolidation.Interval, c.Sync.Remote, c.Sync.Interval, c.Log.Format, c.Log.Level, c.Daemon.Metrics, c.Hooks.Agent)
}

// GoString keeps %#v as safe as %v.
func (c Config) GoString() string { return "Config{" + c.String() + "}" }

// redactURI hides a password written into a URI's user info.
func redactURI(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		if i := strings.Index(s, "@"); i >= 0 && strings.Contains(s[:i], ":") {
			return "(uri with credentials, redacted)"
		}
		return s
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// LoadConfig fills *c for repo: DefaultConfig, memsync.yaml, MEMSYNC_*
// environment, then the flags of fs that were set on the command line and
// are bound to c (those registered by AddGraphFlags), then resolves Graph
// and validates.
//
// The front binary runs append with it and the core binary every other
// command, so memsync.yaml, the environment and flags mean the same in both.
func LoadConfig(env *Env, repo string, fs *flag.FlagSet, c *Config) error {
	set := map[string]string{}
	if fs != nil {
		fs.Visit(func(f *flag.Flag) {
			if _, ok := f.Value.(*configValue); ok {
				set[f.Name] = f.Value.String()
			}
		})
	}
	*c = DefaultConfig()
	if err := c.loadFile(ConfigFile(repo)); err != nil {
		return err
	}
	c.applyEnv(env.Getenv)
	for name, v := range set {
		if err := fs.Set(name, v); err != nil {
			return fmt.Errorf("--%s: %w", name, err)
		}
	}
	c.Graph = c.Backend()
	if c.Neo4j.PasswordFile != "" && !filepath.IsAbs(c.Neo4j.PasswordFile) {
		// Relative to the repository, not to wherever a service manager started us.
		c.Neo4j.PasswordFile = filepath.Join(repo, c.Neo4j.PasswordFile)
	}
	return c.Validate()
}

// loadFile decodes path over c; a missing file is no error. Unknown keys
// are errors that name the key and its line.
func (c *Config) loadFile(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", errConfigFile, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w: %v", path, errConfigFile, err)
	}
	if len(doc.Content) == 0 { // empty, or only comments
		return nil
	}
	root := doc.Content[0]
	if err := checkNode(root, reflect.TypeOf(*c), ""); err != nil {
		return fmt.Errorf("%s: %w: %v", path, errConfigFile, err)
	}
	// checkNode has refused unknown keys, which is what KnownFields would do.
	if err := root.Decode(c); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s: %w: %s", path, errConfigFile, strings.Join(te.Errors, "; "))
		}
		return fmt.Errorf("%s: %w: %v", path, errConfigFile, err)
	}
	return nil
}

var durationType = reflect.TypeOf(time.Duration(0))

// checkNode walks a YAML mapping alongside the struct it decodes into and
// names the first key the struct does not have, as a dotted path. A bare 0
// for a duration ("commit_interval: 0") means zero, as it reads; any other
// bare number needs a unit.
func checkNode(n *yaml.Node, t reflect.Type, prefix string) error {
	if t == durationType && n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		if n.Value != "0" {
			return fmt.Errorf("line %d: %s: %s needs a unit, e.g. %sms or %ss", n.Line, strings.TrimSuffix(prefix, "."), n.Value, n.Value, n.Value)
		}
		n.Tag, n.Value = "!!str", "0s"
		return nil
	}
	if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		field, ok := yamlField(t, key.Value)
		if !ok {
			return fmt.Errorf("line %d: unknown key %q", key.Line, prefix+key.Value)
		}
		if err := checkNode(val, field.Type, prefix+key.Value+"."); err != nil {
			return err
		}
	}
	return nil
}

func yamlField(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); f.IsExported() && name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// applyEnv applies the MEMSYNC_* variables that are set and not empty.
func (c *Config) applyEnv(getenv func(string) string) {
	for _, e := range []struct {
		name string
		dst  *string
	}{
		{"MEMSYNC_GRAPH", &c.Graph},
		{"MEMSYNC_EMBEDDER", &c.Embedder},
		{"MEMSYNC_NEO4J_URI", &c.Neo4j.URI},
		{"MEMSYNC_NEO4J_USER", &c.Neo4j.User},
		{"MEMSYNC_NEO4J_DATABASE", &c.Neo4j.Database},
		{"MEMSYNC_NEO4J_PASSWORD", &c.password},
		{"MEMSYNC_NEO4J_PASSWORD_FILE", &c.Neo4j.PasswordFile},
		{"MEMSYNC_LOG_FORMAT", &c.Log.Format},
		{"MEMSYNC_LOG_LEVEL", &c.Log.Level},
	} {
		if v := getenv(e.name); v != "" {
			*e.dst = v
		}
	}
	for _, e := range []struct {
		name string
		dst  *bool
	}{
		{"MEMSYNC_GRAPHITI", &c.Neo4j.Graphiti},
		{"MEMSYNC_GRAPHITI_PRIVATE", &c.Neo4j.GraphitiPrivate},
	} {
		if v, err := strconv.ParseBool(getenv(e.name)); err == nil {
			*e.dst = v
		}
	}
}

// configValue is a flag bound to a Config field; LoadConfig re-applies it
// over the file and the environment.
type configValue struct {
	flag.Value
}

type stringField struct{ p *string }

func (s stringField) String() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}
func (s stringField) Set(v string) error { *s.p = v; return nil }

type boolField struct{ p *bool }

func (b boolField) String() string {
	if b.p == nil {
		return "false"
	}
	return strconv.FormatBool(*b.p)
}
func (b boolField) Set(v string) error {
	x, err := strconv.ParseBool(v)
	if err != nil {
		return errors.New("must be true or false")
	}
	*b.p = x
	return nil
}
func (b boolField) IsBoolFlag() bool { return true }

// IsBoolFlag lets a wrapped bool flag be given without a value.
func (v *configValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// AddGraphFlags registers --graph, --neo4j-uri, --neo4j-user and
// --neo4j-database bound to c. The password has no flag, by design.
func AddGraphFlags(fs *flag.FlagSet, c *Config) {
	fs.Var(&configValue{stringField{&c.Graph}}, "graph", "projection `backend`: embedded or neo4j (default neo4j when a Neo4j URI is configured, else embedded; env MEMSYNC_GRAPH)")
	fs.Var(&configValue{stringField{&c.Neo4j.URI}}, "neo4j-uri", "Neo4j Bolt `URI`, e.g. neo4j://127.0.0.1:7687 (env MEMSYNC_NEO4J_URI; password only from MEMSYNC_NEO4J_PASSWORD or neo4j.password_file)")
	fs.Var(&configValue{stringField{&c.Neo4j.User}}, "neo4j-user", "Neo4j `user` (default neo4j; env MEMSYNC_NEO4J_USER)")
	fs.Var(&configValue{stringField{&c.Embedder}}, "embedder", "vector recall `model`: none, default (built in) or a model file's path (default none; env MEMSYNC_EMBEDDER)")
	fs.Var(&configValue{stringField{&c.Neo4j.Database}}, "neo4j-database", "Neo4j `database` (default: the server's; env MEMSYNC_NEO4J_DATABASE)")
}

// AddGraphitiFlags registers --graphiti and --graphiti-private bound to c:
// the commands that write the projection (run, sync, rebuild) take them.
func AddGraphitiFlags(fs *flag.FlagSet, c *Config) {
	fs.Var(&configValue{boolField{&c.Neo4j.Graphiti}}, "graphiti", "on Neo4j, also project the shared group in Graphiti's shape, for graphiti-core and its MCP server (neo4j.graphiti; env MEMSYNC_GRAPHITI)")
	fs.Var(&configValue{boolField{&c.Neo4j.GraphitiPrivate}}, "graphiti-private", "with --graphiti, also project every agent's private group as AGENT_<name>, readable by any Graphiti client given that id (neo4j.graphiti_private; env MEMSYNC_GRAPHITI_PRIVATE)")
}

// DefaultConfigYAML is the memsync.yaml that init writes: every option,
// commented out, at its default.
const DefaultConfigYAML = `# memsync configuration. Every option is shown commented out at its default.
# Precedence: flags > MEMSYNC_* environment > this file > defaults.

# Projection backend: embedded or neo4j. Default: neo4j when neo4j.uri is
# set, else embedded. Env MEMSYNC_GRAPH, flag --graph.
# graph: embedded

# Vector recall, fused with the lexical index: none, default (the model
# built into the binary) or a model file's path. Env MEMSYNC_EMBEDDER,
# flag --embedder.
# embedder: none

# neo4j:
#   uri: ""                # e.g. neo4j://127.0.0.1:7687  (MEMSYNC_NEO4J_URI, --neo4j-uri)
#   user: neo4j            # MEMSYNC_NEO4J_USER, --neo4j-user
#   database: ""           # empty: the server's default  (MEMSYNC_NEO4J_DATABASE, --neo4j-database)
#   password_file: ""      # file whose first line is the password (MEMSYNC_NEO4J_PASSWORD_FILE)
#   # The password itself is never written here and has no flag:
#   # set MEMSYNC_NEO4J_PASSWORD or use password_file.
#   graphiti: false        # also project in Graphiti's shape (MEMSYNC_GRAPHITI, --graphiti)
#   graphiti_private: false # with graphiti, private groups too, as AGENT_<name> (MEMSYNC_GRAPHITI_PRIVATE, --graphiti-private)

# append:
#   fsync: true            # fsync every appended line; false trades power-cut safety for speed
#   create_agents: false   # true: append creates an agent init never created (else --new-agent)

# daemon:
#   batch_size: 1000       # records per graph write
#   batch_window: 50ms     # how long a batch may wait to fill
#   poll_interval: 1s      # rescan journals even without file events
#   commit_interval: 5m    # git commit of journals; 0 disables
#   metrics: ""            # Prometheus /metrics and /healthz: HOST:PORT, or a port on 127.0.0.1; empty: off

# compaction:
#   max_day_lines: 500     # compact a day file early when it grows past this
#   weekday: sunday        # weekly compaction day
#   summarizer: ""         # command that writes summaries (stdin: records); empty: built-in

# consolidation:
#   interval: 6h           # the daemon's consolidation cycle (memsync consolidate); 0 disables

# sync:                    # many hosts, one memory (memsync run --remote NAME)
#   remote: ""             # git remote to fetch, merge and push; empty: no exchange
#   interval: 1m           # how often the daemon exchanges with it

# log:
#   format: auto           # auto (console on a terminal, else json), json, console
#   level: info            # debug, info, warn, error

# hooks:
#   agent: ""              # the agent memsync hook speaks for without --agent or MEMSYNC_AGENT
`

// ConfigFile is the repository's optional memsync.yaml.
func ConfigFile(repo string) string { return filepath.Join(repo, "memsync.yaml") }
