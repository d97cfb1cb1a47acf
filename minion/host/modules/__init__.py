"""minion/modules"""
