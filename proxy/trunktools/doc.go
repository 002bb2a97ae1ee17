// Package trunktools is the trunk's own tools and resource, under the
// reserved server name "trunk": status, wait_for_servers, and when the
// config asks, the resource tools (list_resources, read_resource) and tool
// search (search_tools, call_tool), and code mode (run_code, code_api,
// which run programs with proxy/codemode). Their definitions are catalog entries
// (Entries); they run against the trunk through the small Trunk interface,
// so that they know nothing of sessions or routing.
package trunktools
