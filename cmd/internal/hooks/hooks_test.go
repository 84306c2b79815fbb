package hooks

import (
	"strings"
	"testing"
)

// TestHookPayloadShapes: every shape the real hosts send decodes, nulls
// and unknown fields included.
func TestHookPayloadShapes(t *testing.T) {
	for _, tc := range []struct {
		name, payload string
		want          Input
	}{
		{"claude-code PreCompact without permission_mode, custom_instructions null",
			`{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":null}`,
			Input{SessionID: "s", TranscriptPath: "/t.jsonl", Cwd: "/w", HookEventName: "PreCompact", Trigger: "auto"}},
		{"claude-code UserPromptSubmit with prompt_id",
			`{"session_id":"s","cwd":"/w","permission_mode":"acceptEdits","hook_event_name":"UserPromptSubmit","prompt":"hi there","prompt_id":"p-1"}`,
			Input{SessionID: "s", Cwd: "/w", PermissionMode: "acceptEdits", HookEventName: "UserPromptSubmit", Prompt: "hi there", PromptID: "p-1"}},
		{"claude-code Stop with last_assistant_message",
			`{"session_id":"s","cwd":"/w","hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"Done."}`,
			Input{SessionID: "s", Cwd: "/w", HookEventName: "Stop", StopHookActive: true, LastMessage: "Done."}},
		{"claude-code SessionEnd reason other",
			`{"session_id":"s","cwd":"/w","hook_event_name":"SessionEnd","reason":"other"}`,
			Input{SessionID: "s", Cwd: "/w", HookEventName: "SessionEnd", Reason: "other"}},
		{"codex SessionStart, transcript_path null",
			`{"session_id":"s","transcript_path":null,"cwd":"/w","hook_event_name":"SessionStart","model":"gpt-5.5","permission_mode":"default","source":"resume"}`,
			Input{SessionID: "s", Cwd: "/w", HookEventName: "SessionStart", Model: "gpt-5.5", PermissionMode: "default", Source: "resume"}},
		{"codex Stop, last_assistant_message null",
			`{"session_id":"s","turn_id":"t","cwd":"/w","hook_event_name":"Stop","model":"m","permission_mode":"default","stop_hook_active":false,"last_assistant_message":null}`,
			Input{SessionID: "s", TurnID: "t", Cwd: "/w", HookEventName: "Stop", Model: "m", PermissionMode: "default"}},
		{"codex SessionEnd",
			`{"session_id":"s","transcript_path":null,"cwd":"/w","hook_event_name":"SessionEnd","model":"m","reason":"other","extra":{"x":1}}`,
			Input{SessionID: "s", Cwd: "/w", HookEventName: "SessionEnd", Model: "m", Reason: "other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadInput(t.Context(), strings.NewReader(tc.payload))
			if err != nil || got != tc.want {
				t.Fatalf("got %+v %v, want %+v", got, err, tc.want)
			}
		})
	}
}
