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
	for _, name := range []string{"my.srv", "météo fr", "a__b", "天气"} {
		id, err := naming.ServerID(name)
		fmt.Printf("%q %v\n", id, err)
	}
	// Output:
	// "my_srv" <nil>
	// "meteo_fr" <nil>
	// "" server "a__b": name may not contain "__": exported names are split there (mcp__<server>__<tool>); use "a_b"
	// "" server "天气": a server's name is part of every tool name it exports (mcp__<server>__<tool>), where hosts accept only A-Z, a-z, 0-9, '_' and '-', and "天", "气" have no spelling in those; rename the entry, for instance to "u5929_u6c14"
}
