package endpoint_test

import (
	"encoding/json"
	"fmt"

	"github.com/gatewaykit/gatewaykit/endpoint"
)

func ExampleStop() {
	var one, many endpoint.Stop
	_ = json.Unmarshal([]byte(`"\n\n"`), &one)
	_ = json.Unmarshal([]byte(`["END","STOP"]`), &many)
	fmt.Printf("%q %q\n", one, many)
	err := json.Unmarshal([]byte(`42`), &many)
	fmt.Println(err)
	// Output:
	// ["\n\n"] ["END" "STOP"]
	// 400 invalid_request_error: stop must be a string or an array of strings (param stop)
}

func ExampleValidImageURL() {
	for _, u := range []string{
		"https://example.com/cat.png",
		"data:image/png;base64,iVBORw0KGgo=",
		"data:text/plain;base64,aGk=",
		"ftp://example.com/cat.png",
	} {
		fmt.Println(endpoint.ValidImageURL(u))
	}
	// Output:
	// true
	// true
	// false
	// false
}
