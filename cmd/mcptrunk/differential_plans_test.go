package main

// The plans of the differential tests: what to call, get and read on each
// upstream, and how to normalise what legitimately differs between runs.

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// diffPlan says how to exercise one server.
type diffPlan struct {
	// tools: arguments for every tool that is safe to call. A listed tool
	// that is neither here nor in skip fails the test, so new tools are
	// looked at rather than called blindly.
	tools map[string]map[string]any
	// twice: tools called a second time right after the first (toggles).
	twice map[string]bool
	// last: tools called after all the others (they change the lists).
	last []string
	// skip: tools never called, and why.
	skip map[string]string
	// prompts: arguments for every prompt.
	prompts map[string]map[string]string
	// templates: an expansion of every resource template.
	templates map[string]string
	// startupLog is a log message the server sends each client soon after
	// the handshake, once a request of its own to the client (roots/list)
	// is answered; the comparison waits for it on both sides.
	startupLog string
	// startupAgain: the tool whose call makes the server ask again when
	// that first request failed. A host on 2026-07-28 cannot be asked
	// anything outside a call, so the trunk refuses the server's request
	// at start-up (-32601); the comparison then waits for that refusal
	// instead of startupLog, and the server asks during this tool's call,
	// which through the trunk logs startupLog first and then what it logs
	// directly.
	startupAgain string
	// normalise removes what legitimately differs between two runs of the
	// server (clocks, the environment), applied to both sides.
	normalise func(t *testing.T, v any) any
	// hostFails: tools whose input the host's SDK refuses to give, with the
	// SDK's message. A session on 2025-11-25 answers the server's request
	// with that error and the tool reports it as its result; a host on
	// 2026-07-28 cannot answer an input request with an error, so its call
	// fails with the message. Either way the outcome is the host's refusal,
	// and across those two revisions that is what is compared.
	hostFails map[string]string
	// must: tools and prompts that the server must list, so that their
	// comparison cannot be lost by the server no longer offering them.
	must []string
}

var conformancePlan = diffPlan{
	tools: map[string]map[string]any{
		"test_simple_text":                           {},
		"test_image_content":                         {},
		"test_audio_content":                         {},
		"test_embedded_resource":                     {},
		"test_multiple_content_types":                {},
		"test_tool_with_logging":                     {},
		"test_tool_with_progress":                    {},
		"test_error_handling":                        {},
		"test_sampling":                              {"prompt": "differential sampling"},
		"test_elicitation":                           {"message": "differential elicitation"},
		"test_elicitation_sep1034_defaults":          {},
		"test_elicitation_sep1330_enums":             {},
		"json_schema_2020_12_tool":                   {"name": "Ada", "contactMethod": "email", "email": "ada@example.com"},
		"test_reconnection":                          {},
		"test_x_mcp_header":                          {"region": "eu-north", "level": 2},
		"test_missing_capability":                    {},
		"test_streaming_elicitation":                 {},
		"test_logging_tool":                          {},
		"test_trigger_tool_change":                   {},
		"test_trigger_prompt_change":                 {},
		"test_input_required_result_elicitation":     {},
		"test_input_required_result_sampling":        {},
		"test_input_required_result_list_roots":      {},
		"test_input_required_result_request_state":   {},
		"test_input_required_result_multiple_inputs": {},
		"test_input_required_result_multi_round":     {},
		"test_input_required_result_tampered_state":  {},
		"test_input_required_result_capabilities":    {},
	},
	last: []string{"test_trigger_tool_change", "test_trigger_prompt_change"},
	skip: map[string]string{},
	prompts: map[string]map[string]string{
		"test_simple_prompt":                 nil,
		"test_prompt_with_arguments":         {"arg1": "first", "arg2": "second"},
		"test_prompt_with_embedded_resource": {"resourceUri": "test://static-text"},
		"test_prompt_with_image":             nil,
		"test_input_required_result_prompt":  nil,
	},
	templates: map[string]string{"test://template/{id}/data": "test://template/42/data"},
	normalise: func(_ *testing.T, v any) any { return v },
	must: []string{
		"test_input_required_result_elicitation", "test_input_required_result_sampling",
		"test_input_required_result_list_roots", "test_input_required_result_request_state",
		"test_input_required_result_multiple_inputs", "test_input_required_result_multi_round",
		"test_input_required_result_tampered_state", "test_input_required_result_capabilities",
		"test_input_required_result_prompt", "test_sampling", "test_elicitation",
	},
	hostFails: map[string]string{
		"test_elicitation_sep1330_enums": `elicit schema property "titledMulti" items must specify enum for untitled enums`,
	},
}

var everythingPlan = diffPlan{
	tools: map[string]map[string]any{
		"echo":                           {"message": "differential ✓"},
		"get-annotated-message":          {"messageType": "error", "includeImage": true},
		"get-env":                        {},
		"get-resource-links":             {"count": 4},
		"get-resource-reference":         {"resourceType": "Blob", "resourceId": 4},
		"get-structured-content":         {"location": "Chicago"},
		"get-sum":                        {"a": 2, "b": 40},
		"get-tiny-image":                 {},
		"toggle-subscriber-updates":      {},
		"trigger-long-running-operation": {"duration": 0.3, "steps": 3},
		"get-roots-list":                 {},
		"trigger-elicitation-request":    {},
		"trigger-sampling-request":       {"prompt": "differential", "maxTokens": 30},
	},
	twice: map[string]bool{"toggle-subscriber-updates": true}, // on, then off again
	skip: map[string]string{
		"gzip-file-as-resource":             "downloads from the internet",
		"toggle-simulated-logging":          "keeps logging every 5s and keeps the server alive after stdin EOF",
		"simulate-research-query":           "task-mode only (execution.taskSupport required): TestTasksEverything calls it as a task",
		"trigger-url-elicitation":           "sends the user to a web page",
		"trigger-sampling-request-async":    "needs the client's tasks capability",
		"trigger-elicitation-request-async": "needs the client's tasks capability",
	},
	prompts: map[string]map[string]string{
		"simple-prompt":      nil,
		"args-prompt":        {"city": "Oslo", "state": "Viken"},
		"completable-prompt": {"department": "Sales", "name": "Eve"},
		"resource-prompt":    {"resourceType": "Text", "resourceId": "5"},
	},
	templates: map[string]string{
		"demo://resource/dynamic/text/{resourceId}": "demo://resource/dynamic/text/5",
		"demo://resource/dynamic/blob/{resourceId}": "demo://resource/dynamic/blob/6",
	},
	startupLog:   "Roots updated: 1 root(s) received from client",
	startupAgain: "get-roots-list",
	normalise:    normaliseEverything,
}

// clock matches the times server-everything stamps its dynamic resources
// with (toLocaleTimeString): two runs may straddle a second.
var clock = regexp.MustCompile(`\d{1,2}:\d{2}:\d{2}(\s?[AP]M)?`)

// sessionID matches the id server-everything gives each session over HTTP
// (a UUID), which it names in some answers: two sessions have two.
var sessionID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// normaliseEverything blanks the clock and session ids in texts and blobs,
// and the variables in get-env's output that differ between any two
// processes started by the tests (the per-test tag).
func normaliseEverything(t *testing.T, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			s, isString := val.(string)
			switch {
			case isString && k == "text":
				var env map[string]any
				if strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &env) == nil && env["PATH"] != nil {
					delete(env, tagEnv)
					s = mustJSON(env)
				}
				x[k] = sessionID.ReplaceAllString(clock.ReplaceAllString(s, "<time>"), "<session>")
			case isString && k == "blob":
				if b, err := base64.StdEncoding.DecodeString(s); err == nil {
					x[k] = "<blob> " + clock.ReplaceAllString(string(b), "<time>")
				}
			default:
				x[k] = normaliseEverything(t, val)
			}
		}
		return x
	case []any:
		for i := range x {
			x[i] = normaliseEverything(t, x[i])
		}
		return x
	}
	return v
}
