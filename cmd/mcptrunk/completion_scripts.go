package main

import (
	"fmt"
	"strings"
	"text/template"
)

// completionScript renders the script for shell from the commands. Each
// shell's script is a template over the same model, so the three offer the
// same commands, flags and values.
func completionScript(shell string, cmds []completionCmd) (string, error) {
	t, ok := completionTemplates[shell]
	if !ok {
		return "", fmt.Errorf("no completion for shell %q", shell)
	}
	seen := map[string]bool{}
	var valueFlags []completionFlag // each flag with a value once: its hint is the same everywhere
	for _, c := range cmds {
		for _, f := range c.Flags {
			if f.Value && !seen[f.Name] {
				seen[f.Name] = true
				valueFlags = append(valueFlags, f)
			}
		}
	}
	var b strings.Builder
	err := t.Execute(&b, struct {
		Cmds       []completionCmd
		ValueFlags []completionFlag
	}{cmds, valueFlags})
	return b.String(), err
}

var completionFuncs = template.FuncMap{
	"join": strings.Join,
	// sq quotes s for a POSIX or zsh shell: inside '...', a ' is '\''.
	"sq": func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" },
	// zshdesc escapes s for the [description] of an _arguments spec or
	// the description after "name:" in _describe.
	"zshdesc": strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, ":", `\:`).Replace,
	// zshAction is what _arguments completes a flag's value with.
	"zshAction": func(f completionFlag) string {
		switch {
		case f.File:
			return "_files"
		case len(f.Values) > 0:
			return "(" + strings.Join(f.Values, " ") + ")"
		}
		return "" // shows the message only
	},
	// fishq quotes s for fish: inside '...', only \ and ' are special.
	"fishq": func(s string) string {
		return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
	},
}

var completionTemplates = map[string]*template.Template{
	"bash": template.Must(template.New("bash").Funcs(completionFuncs).Parse(bashCompletion)),
	"zsh":  template.Must(template.New("zsh").Funcs(completionFuncs).Parse(zshCompletion)),
	"fish": template.Must(template.New("fish").Funcs(completionFuncs).Parse(fishCompletion)),
}

// The subcommand is the first word or none (serve), as run reads it; a flag
// is accepted with one dash or two, but offered with two.

const bashCompletion = `# bash completion for mcptrunk, written by "mcptrunk completion bash".
# Load it with: source <(mcptrunk completion bash)
# or save it as ~/.local/share/bash-completion/completions/mcptrunk
_mcptrunk() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    # --flag=value: bash splits the word at "=".
    if [[ $cur == = ]]; then
        cur=
    elif [[ $prev == = ]] && ((COMP_CWORD > 2)); then
        prev=${COMP_WORDS[COMP_CWORD-2]}
    fi
    case $prev in
{{- range .ValueFlags}}
    --{{.Name}}|-{{.Name}})
{{- if .File}}
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
{{- else if .Values}}
        COMPREPLY=($(compgen -W {{sq (join .Values " ")}} -- "$cur"))
{{- else}}
        COMPREPLY=()
{{- end}}
        return ;;
{{- end}}
    esac
    if ((COMP_CWORD == 1)) && [[ $cur != -* ]]; then
        COMPREPLY=($(compgen -W '{{range $i, $c := .Cmds}}{{if $i}} {{end}}{{$c.Name}}{{end}}' -- "$cur"))
        return
    fi
    local cmd=serve flags= args=
    if ((COMP_CWORD > 1)) && [[ ${COMP_WORDS[1]} != -* ]]; then
        cmd=${COMP_WORDS[1]}
    fi
    case $cmd in
{{- range .Cmds}}
    {{.Name}}) flags='{{range $i, $f := .Flags}}{{if $i}} {{end}}--{{$f.Name}}{{end}}'{{if .Args}} args={{sq (join .Args " ")}}{{end}} ;;
{{- end}}
    esac
    if [[ $cur == -* ]]; then
        ((COMP_CWORD == 1)) && flags+=' --version'
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    elif [[ -n $args ]]; then
        COMPREPLY=($(compgen -W "$args" -- "$cur"))
    fi
}
complete -F _mcptrunk mcptrunk
`

const zshCompletion = `#compdef mcptrunk
# zsh completion for mcptrunk, written by "mcptrunk completion zsh".
# Save it as _mcptrunk in a directory of $fpath, or load it with:
#   source <(mcptrunk completion zsh)
_mcptrunk() {
  local -a commands extra
  commands=(
{{- range .Cmds}}
    {{sq (print (zshdesc .Name) ":" .Summary)}}
{{- end}}
  )
  if (( CURRENT == 2 )) && [[ $words[CURRENT] != -* ]]; then
    _describe -t commands 'mcptrunk command' commands
    return
  fi
  local cmd=serve
  if (( CURRENT > 2 )) && [[ $words[2] != -* ]]; then
    cmd=$words[2]
    shift words
    (( CURRENT-- ))
  elif (( CURRENT == 2 )); then
    extra=('--version[print the version]')
  fi
  case $cmd in
{{- range .Cmds}}
  {{.Name}})
{{- if not (or .Flags .Args)}}
    _message 'no arguments'
{{- else}}
    _arguments $extra
{{- range .Flags}} \
      {{if .Value}}{{sq (print "--" .Name "=[" (zshdesc .Usage) "]:" (zshdesc .Name) ":" (zshAction .))}}{{else}}{{sq (print "--" .Name "[" (zshdesc .Usage) "]")}}{{end}}
{{- end}}
{{- if .Args}} \
      {{sq (print "1:" .Name ":(" (join .Args " ") ")")}}
{{- end}}
{{- end}}
    ;;
{{- end}}
  esac
}

if [[ $funcstack[1] == _mcptrunk ]]; then
  _mcptrunk "$@"
else
  compdef _mcptrunk mcptrunk
fi
`

const fishCompletion = `# fish completion for mcptrunk, written by "mcptrunk completion fish".
# Save it as ~/.config/fish/completions/mcptrunk.fish, or load it with:
#   mcptrunk completion fish | source
complete -c mcptrunk -f
complete -c mcptrunk -n __fish_use_subcommand -l version -d 'print the version'
{{- range .Cmds}}
complete -c mcptrunk -n __fish_use_subcommand -a {{.Name}} -d {{fishq .Summary}}
{{- end}}
{{- range $c := .Cmds}}
{{- $cond := print "__fish_seen_subcommand_from " $c.Name}}
{{- if eq $c.Name "serve"}}{{$cond = print "__fish_use_subcommand; or " $cond}}{{end}}
{{- range $c.Flags}}
complete -c mcptrunk -n {{fishq $cond}} -l {{.Name}}{{if .File}} -r -F{{else if .Values}} -x -a {{fishq (join .Values " ")}}{{else if .Value}} -x{{end}} -d {{fishq .Usage}}
{{- end}}
{{- if $c.Args}}
complete -c mcptrunk -n {{fishq $cond}} -a {{fishq (join $c.Args " ")}}
{{- end}}
{{- end}}
`
