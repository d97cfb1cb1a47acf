#!stateconf yaml . jinja
# nothing but this comment
