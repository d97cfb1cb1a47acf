"""minion"""
