package config

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestFilterAllows(t *testing.T) {
	tests := []struct {
		name   string
		filter Filter
		allow  []string
		deny   []string
	}{
		{"zero allows everything", Filter{}, []string{"a", "", "delete_all"}, nil},
		{"allow list", Filter{Allow: []string{"get_*", "list_*"}}, []string{"get_x", "list_", "get_"}, []string{"delete_x", "xget_a", ""}},
		{"deny list", Filter{Deny: []string{"delete_*"}}, []string{"get_x", "deletex"}, []string{"delete_x", "delete_"}},
		{"deny beats allow", Filter{Allow: []string{"*"}, Deny: []string{"rm"}}, []string{"ls"}, []string{"rm"}},
		{"exact names", Filter{Allow: []string{"search_code"}}, []string{"search_code"}, []string{"search_codes"}},
		{"char class and ?", Filter{Allow: []string{"v[12]_?"}}, []string{"v1_a", "v2_b"}, []string{"v3_a", "v1_ab"}},
		{"star does not cross slash", Filter{Allow: []string{"file:*"}}, []string{"file:a"}, []string{"file:a/b"}},
		{"bad pattern never matches", Filter{Allow: []string{"[x"}}, nil, []string{"[x", "x"}},
		{"empty slices are like nil", Filter{Allow: []string{}, Deny: []string{}}, []string{"a"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range tt.allow {
				if !tt.filter.Allows(n) {
					t.Errorf("%+v denies %q", tt.filter, n)
				}
			}
			for _, n := range tt.deny {
				if tt.filter.Allows(n) {
					t.Errorf("%+v allows %q", tt.filter, n)
				}
			}
		})
	}
}

func TestSpecEqual(t *testing.T) {
	base := func() Spec {
		return Spec{
			Name: "a", Type: TransportStdio, Command: "x", Args: []string{"1"},
			Env: map[string]string{"K": "v"}, Cwd: "/", Headers: map[string]string{"H": "v"},
			Tools: Filter{Allow: []string{"a*"}}, ReadOnlyTools: []string{"r"}, Timeouts: defaultTimeouts(),
		}
	}
	tests := []struct {
		name   string
		a, b   Spec
		equals bool
	}{
		{"identical", base(), base(), true},
		{"zero", Spec{}, Spec{}, true},
		{"nil vs empty", Spec{Name: "a"}, Spec{Name: "a", Args: []string{}, Env: map[string]string{}, Headers: map[string]string{},
			ReadOnlyTools: []string{}, Tools: Filter{Allow: []string{}, Deny: []string{}}, Prompts: Filter{Deny: []string{}}, Resources: Filter{Allow: []string{}}}, true},
		{"name", base(), func() Spec { s := base(); s.Name = "b"; return s }(), false},
		{"type", base(), func() Spec { s := base(); s.Type = TransportHTTP; return s }(), false},
		{"command", base(), func() Spec { s := base(); s.Command = "y"; return s }(), false},
		{"args", base(), func() Spec { s := base(); s.Args = []string{"2"}; return s }(), false},
		{"args order", func() Spec { s := base(); s.Args = []string{"1", "2"}; return s }(), func() Spec { s := base(); s.Args = []string{"2", "1"}; return s }(), false},
		{"env value", base(), func() Spec { s := base(); s.Env = map[string]string{"K": "w"}; return s }(), false},
		{"env extra", base(), func() Spec { s := base(); s.Env = map[string]string{"K": "v", "L": ""}; return s }(), false},
		{"cwd", base(), func() Spec { s := base(); s.Cwd = "/tmp"; return s }(), false},
		{"url", base(), func() Spec { s := base(); s.URL = "http://x"; return s }(), false},
		{"headers", base(), func() Spec { s := base(); s.Headers = nil; return s }(), false},
		{"disabled", base(), func() Spec { s := base(); s.Disabled = true; return s }(), false},
		{"tools", base(), func() Spec { s := base(); s.Tools.Deny = []string{"x"}; return s }(), false},
		{"prompts", base(), func() Spec { s := base(); s.Prompts.Allow = []string{"x"}; return s }(), false},
		{"resources", base(), func() Spec { s := base(); s.Resources.Deny = []string{"x"}; return s }(), false},
		{"readOnlyTools", base(), func() Spec { s := base(); s.ReadOnlyTools = nil; return s }(), false},
		{"overrides", base(), func() Spec {
			s := base()
			s.Overrides.Tools = map[string]ToolOverride{"echo": {Description: "d"}}
			return s
		}(), false},
		{"overrides nil vs empty", base(), func() Spec { s := base(); s.Overrides.Tools = map[string]ToolOverride{}; return s }(), true},
		{"maxResultBytes", base(), func() Spec { s := base(); s.MaxResultBytes = 4096; return s }(), false},
		{"timeouts", base(), func() Spec { s := base(); s.Timeouts.Call++; return s }(), false},
		{"oauth client", base(), func() Spec { s := base(); s.OAuth.ClientID = "c"; return s }(), false},
		{"oauth scopes", base(), func() Spec { s := base(); s.OAuth.Scopes = []string{"a"}; return s }(), false},
		{"protocolVersion", base(), func() Spec { s := base(); s.ProtocolVersion = "2025-11-25"; return s }(), false},
		{"lazy", base(), func() Spec { s := base(); s.Lazy = true; return s }(), false},
		{"idleTimeout", base(), func() Spec { s := base(); s.IdleTimeout = Duration(time.Minute); return s }(), false},
		{"oauth port", base(), func() Spec { s := base(); s.OAuth.CallbackPort = 8765; return s }(), false},
		{"oauth nil vs empty scopes", base(), func() Spec { s := base(); s.OAuth.Scopes = []string{}; return s }(), true},
		{"credentials", base(), func() Spec { s := base(); s.Credentials.Mode = CredentialsStatic; return s }(), false},
		{"credentials nil vs empty scopes", base(), func() Spec { s := base(); s.Credentials.Scopes = []string{}; return s }(), true},
		{"maxInFlight", base(), func() Spec { s := base(); s.MaxInFlight = 2; return s }(), false},
		{"maxQueued", base(), func() Spec { s := base(); s.MaxQueued = 3; return s }(), false},
		{"breaker", base(), func() Spec { s := base(); s.Breaker.Failures = 3; return s }(), false},
		{"namespace false", base(), func() Spec { s := base(); s.Namespace = new(false); return s }(), false},
		{"namespace true is the default", base(), func() Spec { s := base(); s.Namespace = new(true); return s }(), true},
		{"invalid", base(), func() Spec {
			s := base()
			s.Invalid = &EntryError{Server: "x", Problems: []error{errors.New("a")}}
			return s
		}(), false},
		{"invalid differently", func() Spec { s := base(); s.Invalid = &EntryError{Problems: []error{errors.New("a")}}; return s }(),
			func() Spec { s := base(); s.Invalid = &EntryError{Problems: []error{errors.New("b")}}; return s }(), false},
		{"invalid alike", func() Spec { s := base(); s.Invalid = &EntryError{Problems: []error{errors.New("a")}}; return s }(),
			func() Spec { s := base(); s.Invalid = &EntryError{Problems: []error{errors.New("a")}}; return s }(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Equal(tt.b); got != tt.equals {
				t.Errorf("a.Equal(b) = %v, want %v", got, tt.equals)
			}
			if got := tt.b.Equal(tt.a); got != tt.equals {
				t.Errorf("b.Equal(a) = %v, want %v", got, tt.equals)
			}
		})
	}
	// Equal must not modify its operands.
	s := Spec{Args: []string{}}
	s.Equal(Spec{})
	if s.Args == nil {
		t.Error("Equal modified its receiver")
	}
}

// TestSpecEqualCoversAllFields fails when a field is added to Spec without
// thinking about Equal (every field must change the result).
func TestSpecEqualCoversAllFields(t *testing.T) {
	if n := reflect.TypeFor[Spec]().NumField(); n != 27 {
		t.Fatalf("Spec has %d fields; update Spec.Equal's normalisation and this test", n)
	}
}
