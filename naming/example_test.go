package naming_test

import (
	"fmt"

	"github.com/mcptrunk/mcptrunk/naming"
)

func Example() {
	id, err := naming.ServerID("brave search")
	if err != nil {
		panic(err)
	}
	names, err := naming.Assign(id, []string{"web_search", "web.search"}, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(names["web_search"])
	fmt.Println(names["web.search"])
	fmt.Println(naming.SplitMCPName(names["web.search"]))

	u := naming.ResourceURI(id, "demo://r/{id}")
	fmt.Println(u)
	fmt.Println(naming.SplitResourceURI("mcptrunk://brave_search/demo://r/42"))
	// Output:
	// mcp__brave_search__web_search
	// mcp__brave_search__web_search_15f83c80
	// brave_search web_search_15f83c80 true
	// mcptrunk://brave_search/demo://r/{id}
	// brave_search demo://r/42 true
}

func ExampleServerID() {
	for _, name := range []string{"my.srv", "a__b", "TRUNK", "a."} {
		id, err := naming.ServerID(name)
		fmt.Printf("%q %v\n", id, err)
	}
	// Output:
	// "my_srv" <nil>
	// "" server "a__b": name may not contain "__"
	// "" server "TRUNK": name "trunk" is reserved for the proxy's own tools
	// "" server "a.": sanitized id "a_" ends with '_', so exported names would not split back unambiguously
}
