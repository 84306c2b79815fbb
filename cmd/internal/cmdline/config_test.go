package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// load runs LoadConfig on a repo holding yaml (none when empty), with env
// and the graph flags parsed from args.
func load(t *testing.T, yaml string, env map[string]string, args ...string) (Config, error) {
	t.Helper()
	repo := t.TempDir()
	if yaml != "" {
		if err := os.WriteFile(filepath.Join(repo, "memsync.yaml"), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var cfg Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	AddGraphFlags(fs, &cfg)
	AddGraphitiFlags(fs, &cfg)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	err := LoadConfig(&Env{Getenv: func(k string) string { return env[k] }}, repo, fs, &cfg)
	return cfg, err
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := load(t, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Graph = GraphEmbedded
	if cfg.String() != want.String() {
		t.Fatalf("defaults:\n got %s\nwant %s", cfg, want)
	}
	d := cfg.Daemon
	if cfg.Graph != "embedded" || !cfg.Append.FSync || d.BatchSize != 1000 || d.BatchWindow != 50*time.Millisecond ||
		d.PollInterval != time.Second || d.CommitInterval != 5*time.Minute || cfg.Compaction.MaxDayLines != 500 ||
		cfg.CompactionWeekday() != time.Sunday || cfg.Compaction.Summarizer != "" || cfg.Log.Format != "auto" || cfg.Log.Level != "info" ||
		cfg.Sync.Remote != "" || cfg.Sync.Interval != time.Minute {
		t.Fatalf("defaults: %s", cfg)
	}
}

// TestConfigTemplate: the memsync.yaml init writes parses to the defaults
// as it is, and again with every option uncommented.
func TestConfigTemplate(t *testing.T) {
	def, _ := load(t, "", nil)
	cfg, err := load(t, DefaultConfigYAML, nil)
	if err != nil || cfg.String() != def.String() {
		t.Fatalf("commented template: %v\n%s", err, cfg)
	}
	option := regexp.MustCompile(`(?m)^# ( *)([a-z0-9_]+:)`)
	uncommented := option.ReplaceAllString(DefaultConfigYAML, "$1$2")
	if strings.Count(uncommented, "\n#") == strings.Count(DefaultConfigYAML, "\n#") {
		t.Fatal("nothing uncommented")
	}
	cfg, err = load(t, uncommented, nil)
	if err != nil {
		t.Fatalf("uncommented template: %v\n%s", err, uncommented)
	}
	if cfg.String() != def.String() {
		t.Fatalf("uncommented template is not the defaults:\n got %s\nwant %s", cfg, def)
	}
}

func TestConfigLayers(t *testing.T) {
	file := `
graph: embedded
neo4j:
  uri: bolt://file:7687
  user: fileuser
append:
  fsync: false
daemon:
  batch_size: 10
  batch_window: 5ms
  commit_interval: 0
compaction:
  weekday: Friday
sync:
  remote: origin
  interval: 30s
log:
  format: json
`
	cfg, err := load(t, file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Graph != "embedded" || cfg.Neo4j.URI != "bolt://file:7687" || cfg.Neo4j.User != "fileuser" || cfg.Append.FSync ||
		cfg.Daemon.BatchSize != 10 || cfg.Daemon.BatchWindow != 5*time.Millisecond || cfg.Daemon.CommitInterval != 0 ||
		cfg.Daemon.PollInterval != time.Second || cfg.CompactionWeekday() != time.Friday || cfg.Log.Format != "json" ||
		cfg.Sync.Remote != "origin" || cfg.Sync.Interval != 30*time.Second {
		t.Fatalf("file: %s", cfg)
	}
	env := map[string]string{"MEMSYNC_GRAPH": "neo4j", "MEMSYNC_NEO4J_URI": "neo4j://env:7687", "MEMSYNC_NEO4J_DATABASE": "envdb"}
	cfg, err = load(t, file, env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Graph != "neo4j" || cfg.Neo4j.URI != "neo4j://env:7687" || cfg.Neo4j.User != "fileuser" || cfg.Neo4j.Database != "envdb" {
		t.Fatalf("env over file: %s", cfg)
	}
	cfg, err = load(t, file, env, "--graph", "embedded", "--neo4j-user", "flaguser", "--neo4j-uri=bolt://flag:1")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Graph != "embedded" || cfg.Neo4j.User != "flaguser" || cfg.Neo4j.URI != "bolt://flag:1" || cfg.Neo4j.Database != "envdb" {
		t.Fatalf("flags over env: %s", cfg)
	}
}

func TestConfigGraphDefault(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		env  map[string]string
		args []string
		want string
	}{
		{"nothing", "", nil, nil, "embedded"},
		{"uri in file", "neo4j:\n  uri: neo4j://h:7687\n", nil, nil, "neo4j"},
		{"uri in env", "", map[string]string{"MEMSYNC_NEO4J_URI": "neo4j://h:7687"}, nil, "neo4j"},
		{"uri by flag", "", nil, []string{"--neo4j-uri", "neo4j://h:7687"}, "neo4j"},
		{"uri but embedded asked", "graph: embedded\nneo4j:\n  uri: neo4j://h:7687\n", nil, nil, "embedded"},
		{"uri but embedded flag", "", map[string]string{"MEMSYNC_NEO4J_URI": "neo4j://h"}, []string{"--graph=embedded"}, "embedded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := load(t, tc.yaml, tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Graph != tc.want {
				t.Fatalf("graph %s, want %s", cfg.Graph, tc.want)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		env  map[string]string
		args []string
		is   error
		msg  string
	}{
		{"unknown top-level key", "grpah: neo4j\n", nil, nil, errConfigFile, `line 1: unknown key "grpah"`},
		{"unknown nested key", "daemon:\n  batch_size: 3\n  batchsize: 4\n", nil, nil, errConfigFile, `line 3: unknown key "daemon.batchsize"`},
		{"no password in the file", "neo4j:\n  password: hunter2\n", nil, nil, errConfigFile, `unknown key "neo4j.password"`},
		{"bad yaml", "daemon: [\n", nil, nil, errConfigFile, "memsync.yaml"},
		{"wrong type", "daemon:\n  batch_size: lots\n", nil, nil, errConfigFile, "lots"},
		{"bad duration", "daemon:\n  batch_window: soon\n", nil, nil, errConfigFile, "soon"},
		{"bad graph", "graph: mysql\n", nil, nil, errGraph, `graph "mysql"`},
		{"bad graph env", "", map[string]string{"MEMSYNC_GRAPH": "x"}, nil, errGraph, `graph "x"`},
		{"bad graph flag", "", nil, []string{"--graph", "y"}, errGraph, `graph "y"`},
		{"neo4j without uri", "graph: neo4j\n", nil, nil, errNeo4jURIMissing, "neo4j.uri"},
		{"bad uri scheme", "", map[string]string{"MEMSYNC_NEO4J_URI": "http://h:7474"}, nil, errNeo4jURI, "http://h:7474"},
		{"uri without host", "neo4j:\n  uri: neo4j://\n", nil, nil, errNeo4jURI, "neo4j.uri"},
		{"batch size", "daemon:\n  batch_size: 0\n", nil, nil, errBatchSize, "daemon.batch_size 0"},
		{"batch window", "daemon:\n  batch_window: 0s\n", nil, nil, errDuration, "daemon.batch_window"},
		{"poll interval", "daemon:\n  poll_interval: -1s\n", nil, nil, errDuration, "daemon.poll_interval"},
		{"commit interval", "daemon:\n  commit_interval: -1m\n", nil, nil, errCommitInterval, "daemon.commit_interval"},
		{"sync interval", "sync:\n  interval: -1m\n", nil, nil, errSyncInterval, "sync.interval"},
		{"max day lines", "compaction:\n  max_day_lines: 0\n", nil, nil, errMaxDayLines, "compaction.max_day_lines"},
		{"weekday", "compaction:\n  weekday: someday\n", nil, nil, errWeekday, `"someday"`},
		{"log format", "log:\n  format: xml\n", nil, nil, errLogFormat, `"xml"`},
		{"log level", "", map[string]string{"MEMSYNC_LOG_LEVEL": "loud"}, nil, errLogLevel, `"loud"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.yaml, tc.env, tc.args...)
			if !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %q does not name %q in one line", err, tc.msg)
			}
		})
	}
	// Empty and comment-only files are fine.
	for _, y := range []string{"\n", "# nothing\n", "---\n"} {
		if _, err := load(t, y, nil); err != nil {
			t.Errorf("%q: %v", y, err)
		}
	}
}

func TestConfigPassword(t *testing.T) {
	const secret = "s3cr3t-pw"
	env := map[string]string{"MEMSYNC_NEO4J_URI": "neo4j://user:" + secret + "@h:7687", "MEMSYNC_NEO4J_PASSWORD": secret}
	cfg, err := load(t, "", env)
	if err != nil {
		t.Fatal(err)
	}
	if pw, err := cfg.Neo4jPassword(); err != nil || pw != secret {
		t.Fatalf("password %q %v", pw, err)
	}
	for _, s := range []string{cfg.String(), fmt.Sprint(cfg), fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, &cfg), fmt.Sprintf("%+v", &cfg)} {
		if strings.Contains(s, secret) {
			t.Fatalf("the password leaks: %s", s)
		}
	}
	if !strings.Contains(cfg.String(), "neo4j.password=(from env)") || !strings.Contains(cfg.String(), "h:7687") {
		t.Errorf("String: %s", cfg)
	}

	// From a file, relative to the repository; the first line only.
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "pw"), []byte(secret+"\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var c Config
	err = LoadConfig(&Env{Getenv: func(k string) string {
		return map[string]string{"MEMSYNC_NEO4J_PASSWORD_FILE": "pw"}[k]
	}}, repo, nil, &c)
	if err != nil {
		t.Fatal(err)
	}
	if pw, err := c.Neo4jPassword(); err != nil || pw != secret {
		t.Fatalf("password from file %q %v", pw, err)
	}
	if strings.Contains(c.String(), secret) {
		t.Fatalf("leak: %s", c)
	}
	c.Neo4j.PasswordFile = filepath.Join(repo, "missing")
	if _, err := c.Neo4jPassword(); !errors.Is(err, errPassword) {
		t.Errorf("missing password file: %v", err)
	}
	// No flag can carry it.
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	AddGraphFlags(fs, &c)
	fs.VisitAll(func(f *flag.Flag) {
		if strings.Contains(f.Name, "password") {
			t.Errorf("flag --%s", f.Name)
		}
	})
}

func TestMetricsAddr(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"9464", "127.0.0.1:9464", true},
		{"0", "127.0.0.1:0", true},
		{"127.0.0.1:9464", "127.0.0.1:9464", true},
		{"0.0.0.0:9464", "0.0.0.0:9464", true},
		{"[::1]:9464", "[::1]:9464", true},
		{":9464", ":9464", true},
		{"70000", "", false},
		{"localhost", "", false},
		{"host:port", "", false},
		{"http://x:1", "", false},
	} {
		got, err := MetricsAddr(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("MetricsAddr(%q) = %q, %v; want %q ok=%t", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestConfigGraphiti: neo4j.graphiti and neo4j.graphiti_private come from
// the file, MEMSYNC_GRAPHITI(_PRIVATE) and --graphiti(-private), in that
// order of precedence; a value that is not a boolean in the environment is
// ignored.
func TestConfigGraphiti(t *testing.T) {
	for _, c := range []struct {
		name          string
		yaml          string
		env           map[string]string
		args          []string
		graphiti, prv bool
	}{
		{"default off", "", nil, nil, false, false},
		{"file", "neo4j:\n  graphiti: true\n  graphiti_private: true\n", nil, nil, true, true},
		{"env", "", map[string]string{"MEMSYNC_GRAPHITI": "1"}, nil, true, false},
		{"env private", "", map[string]string{"MEMSYNC_GRAPHITI": "true", "MEMSYNC_GRAPHITI_PRIVATE": "1"}, nil, true, true},
		{"env over file", "neo4j:\n  graphiti: true\n", map[string]string{"MEMSYNC_GRAPHITI": "0"}, nil, false, false},
		{"env not a bool", "", map[string]string{"MEMSYNC_GRAPHITI": "yes please"}, nil, false, false},
		{"flag", "", nil, []string{"--graphiti"}, true, false},
		{"flag over env", "", map[string]string{"MEMSYNC_GRAPHITI": "1"}, []string{"--graphiti=false"}, false, false},
		{"flags", "", nil, []string{"--graphiti", "--graphiti-private"}, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := load(t, c.yaml, c.env, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Neo4j.Graphiti != c.graphiti || cfg.Neo4j.GraphitiPrivate != c.prv {
				t.Fatalf("graphiti %v, graphiti_private %v; want %v, %v", cfg.Neo4j.Graphiti, cfg.Neo4j.GraphitiPrivate, c.graphiti, c.prv)
			}
		})
	}
}
