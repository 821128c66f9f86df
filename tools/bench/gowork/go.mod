module pmubpf/gowork

go 1.19
