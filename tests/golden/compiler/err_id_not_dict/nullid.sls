a-null:
