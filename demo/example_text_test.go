package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
)

func ExampleCountTokens() {
	fmt.Println(demo.CountTokens("Hello, world!"))
	// Output: 4
}

func ExampleTextBackend_Chat() {
	var req chat.Request
	_ = json.Unmarshal([]byte(`{"model":"demo-chat","stop":["four"],"messages":[{"role":"user","content":"Count!"}]}`), &req)
	res, _ := demo.NewTextBackend().Chat().Complete(context.Background(), &chat.Params{Request: &req, Model: &models.Model{ID: demo.ChatModel}})
	fmt.Printf("%q %s %+v\n", res.Choices[0].Content, res.Choices[0].FinishReason, res.Usage)
	// Output:
	// "You said: \"Count!\". This is the gatewaykit demo model, counting to twenty: one, two, three, " stop {PromptTokens:2 CompletionTokens:26 TotalTokens:28 PromptTokensDetails:<nil> CompletionTokensDetails:<nil>}
}

func ExampleWithTokensPerChunk() {
	var req chat.Request
	_ = json.Unmarshal([]byte(`{"model":"demo-chat","max_tokens":9,"messages":[{"role":"user","content":"Hi"}]}`), &req)
	b := demo.NewTextBackend(demo.WithTokensPerChunk(3)).Chat()
	for d := range b.Stream(context.Background(), &chat.Params{Request: &req, Model: &models.Model{ID: demo.ChatModel}}) {
		if d.Usage != nil {
			fmt.Println("usage", d.Usage.TotalTokens)
			continue
		}
		fmt.Printf("%q finish_reason=%q\n", d.Content, d.FinishReason)
	}
	// Output:
	// "You said:" finish_reason=""
	// " \"Hi\"" finish_reason=""
	// ". This is" finish_reason="length"
	// usage 10
}

func ExampleWithChunkDelay() {
	var req chat.Request
	_ = json.Unmarshal([]byte(`{"model":"demo-chat","max_tokens":4,"messages":[{"role":"user","content":"Hi"}]}`), &req)
	// Each chunk waits a millisecond; the context's end stops the wait.
	b := demo.NewTextBackend(demo.WithChunkDelay(time.Millisecond), demo.WithTokensPerChunk(2)).Chat()
	for d, err := range b.Stream(context.Background(), &chat.Params{Request: &req, Model: &models.Model{ID: demo.ChatModel}}) {
		if err != nil || d.Usage != nil {
			continue
		}
		fmt.Printf("%q\n", d.Content)
	}
	// Output:
	// "You said"
	// ": \""
}
