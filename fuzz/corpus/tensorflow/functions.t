tnode {
  name: "v"
  op: "Placeholder"
  attr {
    key: "dtype"
    value {
      type: DT_FLOAT
    }
  }
  attr {
    key: "shape"
    value {
      shape {
        dim {
          size: -1
        }
        dim {
          size: 2
        }
      }
    }
  }
}
node {
  name: "b"
  op: "Placeholder"
  attr {
    key: "dtype"
    value {
      type: DT_BOOL
    }
  }
}
node {
  name: "if"
  op: "StatelessIf"
  input: "b"
  input: "v"
  attr {
    key: "Tin"
    value {
      list {
        type: DT_FLOAT
      }
    }
  }
  attr {
    key: "Tout"
    value {
      list {
        type: DT_FLOAT
      }
    }
  }
  attr {
    key: "else_branch"
    value {
      func {
        name: "f"
      }
    }
  }
  attr {
    key: "then_branch"
    value {
      func {
        name: "f"
      }
    }
  }
}
node {
  name: "k"
  op: "Const"
  attr {
    key: "dtype"
    value {
      type: DT_HALF
    }
  }
  attr {
    key: "value"
    value {
      tensor {
        dtype: DT_HALF
        tensor_shape {
          dim {
            size: 3
          }
        }
        half_val: 15360
      }
    }
  }
}
node {
  name: "u"
  op: "Custom"
  input: "if:0"
  input: "k"
  attr {
    key: "s"
    value {
      shape {
        dim {
          size: 2
          name: "n"
        }
      }
    }
  }
  attr {
    key: "t"
    value {
      list {
        type: DT_FLOAT
      }
    }
  }
}
library {
  function {
    signature {
      name: "f"
      input_arg {
        name: "a"
        type: DT_FLOAT
      }
      output_arg {
        name: "o"
        type: DT_FLOAT
      }
    }
    node_def {
      name: "p"
      op: "Unpack"
      input: "a"
      attr {
        key: "T"
        value {
          type: DT_FLOAT
        }
      }
      attr {
        key: "num"
        value {
          i: 2
        }
      }
    }
    node_def {
      name: "s"
      op: "AddV2"
      input: "p:output:0"
      input: "p:output:1"
      attr {
        key: "T"
        value {
          type: DT_FLOAT
        }
      }
    }
    ret {
      key: "o"
      value: "s:z:0"
    }
    attr {
      key: "_k"
      value {
        list {
          i: 1
          i: 2
        }
      }
    }
  }
}
