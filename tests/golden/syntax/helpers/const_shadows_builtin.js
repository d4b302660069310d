const url = "/shop"
