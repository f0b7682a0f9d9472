tnode {
  name: "i0"
  op: "Const"
  attr {
    key: "dtype"
    value {
      type: DT_INT32
    }
  }
  attr {
    key: "value"
    value {
      tensor {
        dtype: DT_INT32
        tensor_shape {
        }
        int_val: 0
      }
    }
  }
}
node {
  name: "e"
  op: "Enter"
  input: "i0"
  attr {
    key: "T"
    value {
      type: DT_INT32
    }
  }
  attr {
    key: "frame_name"
    value {
      s: "w"
    }
  }
}
node {
  name: "m"
  op: "Merge"
  input: "e"
  input: "n"
  attr {
    key: "N"
    value {
      i: 2
    }
  }
  attr {
    key: "T"
    value {
      type: DT_INT32
    }
  }
}
node {
  name: "c"
  op: "LoopCond"
  input: "m"
}
node {
  name: "s"
  op: "Switch"
  input: "m"
  input: "c"
  attr {
    key: "T"
    value {
      type: DT_INT32
    }
  }
}
node {
  name: "n"
  op: "NextIteration"
  input: "s:1"
  attr {
    key: "T"
    value {
      type: DT_INT32
    }
  }
}
node {
  name: "x"
  op: "Exit"
  input: "s"
  input: "^c"
  attr {
    key: "T"
    value {
      type: DT_INT32
    }
  }
}
versions {
  producer: 27
}
