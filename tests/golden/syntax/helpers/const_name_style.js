const todoItems = ["a", "b"]
